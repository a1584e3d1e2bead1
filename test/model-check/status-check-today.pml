/*
 * The one-effect protocol of a status-checked tool without effect deadlines — the rule the fenced
 * one (status-check-fenced.pml) replaces — with its two defects: the tool sends without checking
 * its lease (no assertLive()), and a "not found" is trusted once a fixed window W has passed since
 * the SEND, while the downstream measures its commit window from when it STARTS processing, which
 * may be arbitrarily late. Spin finds an interleaving in which the downstream commits the same
 * call twice (P1 violated): a first send processed late commits after the re-send it provoked, or
 * after the send of an executor that took the key over.
 *
 * Actors (ARCHITECTURE.md, "Model-checked protocols"):
 *   Clock    — abstract time: a global clock that advances nondeterministically, one unit a step.
 *   Executor — one per executor process (E1, E2) running the same logical call (one idempotency
 *              key): the claim of libs/guards/idempotency.ts, the execute stage of
 *              libs/guards/execute.ts, and StatusCheckAdapter.submit of
 *              libs/integrations/status-check-adapter.ts. An executor may be descheduled for any
 *              length of time between two steps (SIGSTOP, GC pause): its local view goes stale.
 *   S        — the legacy downstream (services/legacy-filing/filing-store.ts): no idempotency key,
 *              looked up by a natural key; a request waits any time before S starts it; S commits
 *              it within W units of that start, or abandons it.
 * Property:
 *   P1 — at most one effect: S commits at most once (assert in S).
 */

#define TMAX    7   /* the clock stops here: bounds the state space */
#define LEASE   3   /* claim lease, in time units */
#define W       1   /* S's commit window, from when it STARTS processing a request */
#define POLLS   2   /* status lookups per unanswered send (the poll budget) */
#define NREQ    4   /* 2 executors x at most 2 sends */

/* claim store (libs/ports/idempotency-store.ts): one key */
#define FREE     0
#define INFLIGHT 1
#define DONE     2
byte rec = FREE;
byte owner = 0;
byte leaseEnd = 0;

/* requests on their way to S, one slot per send */
#define UNUSED    0
#define SENT      1  /* queued: S has not looked at it yet */
#define STARTED   2  /* S is processing it */
#define COMMITTED 3
byte reqState[NREQ];
byte reqStart[NREQ];
byte nreq = 0;
byte commits = 0;   /* effects S holds under the call's natural key */

byte now = 0;

active proctype Clock() {
end:
  do
  :: atomic { now < TMAX -> now++ }
  od
}

/* S: starts any queued request at any time; commits within W of the start, else never. */
#define PROCESS(i) \
  :: atomic { \
       reqState[i] == SENT -> \
         reqState[i] = STARTED; \
         reqStart[i] = now; \
         printf("t=%d S starts processing request %d\n", now, i) \
     } \
  :: atomic { \
       reqState[i] == STARTED && now <= reqStart[i] + W -> \
         reqState[i] = COMMITTED; \
         commits++; \
         printf("t=%d S commits request %d\n", now, i); \
         assert(commits <= 1) /* P1: at most one effect */ \
     }

active proctype S() {
end:
  do
  PROCESS(0)
  PROCESS(1)
  PROCESS(2)
  PROCESS(3)
  od
}

proctype Executor(byte me) {
  byte sends = 0;
  byte polls;
  byte sentAt;
  byte t;
  byte myreq;
  bool found;

  /* Claim (claimStage): a free key is claimed with a lease; a key in flight elsewhere is taken over
     only once the store's clock has passed its lease; a completed key is answered as a duplicate. */
end_claim:
  atomic {
    if
    :: rec == FREE ->
         rec = INFLIGHT; owner = me; leaseEnd = now + LEASE;
         printf("t=%d E%d claims the key, lease until %d\n", now, me, leaseEnd)
    :: rec == INFLIGHT && owner != me && now > leaseEnd ->   /* taken over */
         owner = me; leaseEnd = now + LEASE;
         printf("t=%d E%d takes the key over, lease until %d\n", now, me, leaseEnd)
    :: rec == DONE -> goto finished   /* a duplicate: answered from the record, never run */
    fi
  }
  /* Look up the natural key before sending (StatusCheckAdapter.submit step 1; after a take-over,
     the execute stage's check first): found -> applied; "not found" -> send. */
  atomic {
    found = (commits > 0);
    if
    :: found -> goto complete
    :: else -> printf("t=%d E%d finds nothing under the natural key\n", now, me)
    fi
  }

send:
  /* TODAY: no assertLive() — the tool sends whether or not this executor still holds the key. */
  atomic {
    myreq = nreq;
    reqState[myreq] = SENT;
    nreq++;
    sends++;
    sentAt = now;
    printf("t=%d E%d sends request %d (its lease ends at %d)\n", now, me, myreq, leaseEnd)
  }
  /* The answer: S's reply to a committed request, or a timeout / lost connection. */
  if
  :: reqState[myreq] == COMMITTED -> goto complete
  :: true -> skip
  fi;
  /* Poll the natural key. TODAY: absent in a lookup that started more than W after the SEND is
     taken as "not applied", and the call is re-sent once. */
  polls = 0;
  do
  :: polls < POLLS ->
       polls++;
       atomic { t = now; found = (commits > 0) }
       if
       :: found -> goto complete
       :: !found && t > sentAt + W ->
            printf("t=%d E%d: nothing found more than W after its send: taken as not applied\n", t, me);
            if
            :: sends < 2 -> goto send
            :: else -> goto complete   /* "nothing was filed": failed */
            fi
       :: else -> skip
       fi
  :: else -> goto complete   /* poll budget spent: UNRESOLVED */
  od;

complete:
  /* Settle the claim (only the owner can): the key is completed, so duplicates never run. */
  atomic {
    if
    :: owner == me -> rec = DONE
    :: else -> skip
    fi
  }
finished:
  skip
}

init {
  atomic {
    run Executor(1);
    run Executor(2)
  }
}
