/*
 * The one-effect protocol of a status-checked tool under the FENCED rule: every send carries an
 * effect deadline d = min(now + send timeout, lease end), computed before the lease check (the
 * fence) and noted in the shared ledger before the send; the downstream commits a request only
 * while its deadline has not passed; "not applied" is concluded only from a lookup that started
 * after the largest deadline in the ledger; executors act only on decisive answers; and a verdict
 * "failed" is reported only by the key's current owner (the release that goes with it succeeds).
 * Spin explores every interleaving of two executors (including take-over, and a freeze between any
 * two steps: between the fence and the send, between the ledger note and the send) and finds no
 * violation of P1 or P2.
 *
 * Actors (ARCHITECTURE.md, "Model-checked protocols"):
 *   Clock    — abstract time, one global clock (the claim store's, the ledger's and S's: clocks are
 *              assumed to agree within the margins the code adds).
 *   Executor — E1 and E2 running one logical call (one idempotency key): the claim, lease and
 *              take-over of libs/guards/idempotency.ts; the execute stage of libs/guards/execute.ts
 *              (check first after a take-over, act only on decisive answers, UNRESOLVED otherwise);
 *              StatusCheckAdapter.submit/check of libs/integrations/status-check-adapter.ts; the
 *              ledger of libs/integrations/submission-ledger.ts. Any process may be descheduled for
 *              any time between two steps (SIGSTOP, GC pause), so its locals go stale.
 *   S        — the legacy downstream (services/legacy-filing/filing-store.ts): a request waits any
 *              time before S looks at it; S commits it only if its deadline has not passed at the
 *              commit (check and commit are one atomic step), else abandons it.
 * Properties:
 *   P1 — at most one effect: S commits at most once.
 *   P2 — "failed" (not applied) is never reported when an effect exists or later comes into
 *        existence from a send made before that report. (A definite failure gives the key back, so
 *        a later claim may run the call afresh: its sends are a new attempt, not covered by the
 *        report.) Each send is tagged with the claim it was made under; a failure report records
 *        the newest claim so far, and S asserts that it never commits a send of such a claim.
 *
 * Define UNFENCED_FAILED (spin -DUNFENCED_FAILED -a) to let an executor that has lost its key report
 * "failed" anyway: Spin then finds a P2 violation (the stale executor's decisive check races the
 * new owner's check, ledger note and send).
 */

#define TMAX    11  /* the clock stops here: bounds the state space */
#define LEASE   4   /* claim lease */
#define SENDTO  2   /* the send timeout: the effect deadline is min(now + SENDTO, lease end) */
#define POLLS   2   /* status checks per unanswered send (the poll budget) */
#define NREQ    4   /* 2 executors x at most 2 sends */

/* claim store (libs/ports/idempotency-store.ts): one key */
#define FREE     0   /* never claimed, or released after a definite failure */
#define INFLIGHT 1
#define DONE     2   /* completed: SUCCESS or UNRESOLVED; duplicates are answered, never run */
byte rec = FREE;
byte owner = 0;
byte leaseEnd = 0;
byte gen = 0;        /* claims so far (fresh or taken over); each send carries its claim's number */

/* the shared ledger of sends: the largest effect deadline noted for the call (0: none) */
byte maxd = 0;

/* requests on their way to S, one slot per send */
#define UNUSED    0
#define SENT      1
#define COMMITTED 2
byte reqState[NREQ];
byte reqD[NREQ];     /* the request's effect deadline */
byte reqGen[NREQ];   /* the claim it was sent under */
byte nreq = 0;
byte commits = 0;    /* effects S holds under the call's natural key */

/* P2 bookkeeping: sends made under claims 1..failedUpTo must never commit */
byte failedUpTo = 0;

byte now = 1;        /* starts at 1, so an empty ledger (0) lies in the past */

active proctype Clock() {
end:
  do
  :: atomic { now < TMAX -> now++ }
  od
}

/* S (insertWithinWindow): the deadline check and the commit are one step. */
#define PROCESS(i) \
  :: atomic { \
       reqState[i] == SENT && now <= reqD[i] -> \
         reqState[i] = COMMITTED; \
         commits++; \
         printf("t=%d S commits request %d\n", now, i); \
         assert(commits <= 1);          /* P1 */ \
         assert(reqGen[i] > failedUpTo) /* P2: no effect from a send a failure report covers */ \
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

/*
 * A status check (StatusCheckAdapter.check; also the look-up before the first send): the lookup of
 * the natural key starts at t; the ledger is read afterwards, possibly much later.
 * applied: S holds the effect; not-applied: nothing found by a lookup that started after the
 * largest deadline in the ledger; unknown otherwise. Scratch locals are cleared once used, so
 * states that differ only in them are not told apart.
 */
#define APPLIED     1
#define NOT_APPLIED 2
#define UNKNOWN     3
inline statusCheck() {
  atomic { t = now; found = (commits > 0) }
  atomic {
    if
    :: found -> answer = APPLIED
    :: !found && t > maxd -> answer = NOT_APPLIED
    :: else -> answer = UNKNOWN
    fi;
    t = 0;
    found = false
  }
}

proctype Executor(byte me) {
  byte sends = 0;
  byte polls = 0;
  byte t;
  byte d;
  byte myL;      /* this executor's lease end, as it knows it */
  byte myGen;
  byte answer;
  bool found;

  /* Claim (claimStage): a free key is claimed with a lease; a key in flight elsewhere is taken over
     only once the store's clock has passed its lease; a completed key is answered as a duplicate. */
end_claim:
  atomic {
    if
    :: rec == FREE ->
         rec = INFLIGHT; owner = me; leaseEnd = now + LEASE; myL = leaseEnd; gen++; myGen = gen;
         printf("t=%d E%d claims the key (claim %d), lease until %d\n", now, me, myGen, myL)
    :: rec == INFLIGHT && owner != me && now > leaseEnd ->
         owner = me; leaseEnd = now + LEASE; myL = leaseEnd; gen++; myGen = gen;
         printf("t=%d E%d takes the key over (claim %d), lease until %d\n", now, me, myGen, myL)
    :: rec == DONE -> printf("t=%d E%d: a duplicate, answered from the record\n", now, me); goto finished
    fi
  }

  /* Check first (execute stage after a take-over; the adapter's look-up before a first send). */
  statusCheck();
  if
  :: answer == APPLIED -> answer = 0; goto succeeded
  :: answer == NOT_APPLIED -> answer = 0
  :: answer == UNKNOWN -> answer = 0; goto unresolved
  fi;

send:
  /* The effect deadline, from the executor's clock read BEFORE the fence, capped by the lease. */
  d = ((now + SENDTO < myL) -> now + SENDTO : myL);
  /* The fence (assertLive): the lease must still be live, by the executor's clock. */
  if
  :: now < myL -> skip
  :: else -> printf("t=%d E%d lost its lease: not sent\n", now, me); goto unresolved
  fi;
  /* The ledger note (noteSend), durable before the send. */
  atomic {
    if
    :: d > maxd -> maxd = d
    :: else -> skip
    fi
  }
  /* The send: (request, d) into S's queue. S's answer may be lost (timeout, reset connection);
     an answer that does arrive says what a poll would find, so only the lost-answer case is kept. */
  atomic {
    printf("t=%d E%d sends request %d with deadline %d\n", now, me, nreq, d);
    reqState[nreq] = SENT;
    reqD[nreq] = d;
    reqGen[nreq] = myGen;
    nreq++;
    sends++;
    d = 0
  }
  /* Poll with status checks; act only on a decisive answer. */
  do
  :: polls < POLLS ->
       polls++;
       statusCheck();
       if
       :: answer == APPLIED -> answer = 0; polls = 0; goto succeeded
       :: answer == NOT_APPLIED && sends < 2 ->   /* re-send once: fence, deadline, note */
            answer = 0; polls = 0; goto send
       :: answer == NOT_APPLIED && sends >= 2 -> answer = 0; polls = 0; goto failed
       :: answer == UNKNOWN -> answer = 0
       fi
  :: else -> polls = 0; goto unresolved   /* poll budget spent while unknown */
  od;

succeeded:
  /* SUCCESS: the claim is completed (only its owner can complete it). */
  atomic {
    if
    :: owner == me -> rec = DONE
    :: else -> skip
    fi;
    printf("t=%d E%d reports SUCCESS\n", now, me);
    goto finished
  }

failed:
  /* A definite failure gives the key back (release: only its owner can). The verdict "failed" is
     reported only when that release succeeds — an executor that lost its key does not know what the
     new owner sent, and reports UNRESOLVED instead. */
  atomic {
    if
    :: owner == me && rec == INFLIGHT ->
         rec = FREE;
         assert(commits == 0);   /* P2: no effect exists now ... */
         failedUpTo = gen;       /* ... nor comes from a send made so far */
         printf("t=%d E%d reports FAILED (not applied)\n", now, me)
#ifdef UNFENCED_FAILED
    :: else ->
         assert(commits == 0);
         failedUpTo = gen;
         printf("t=%d E%d reports FAILED without holding the key\n", now, me)
#else
    :: else -> printf("t=%d E%d lost its key: reports UNRESOLVED\n", now, me)
#endif
    fi;
    goto finished
  }

unresolved:
  /* UNRESOLVED: the claim is completed so duplicates never run; a case is opened. */
  atomic {
    if
    :: owner == me -> rec = DONE
    :: else -> skip
    fi;
    printf("t=%d E%d reports UNRESOLVED\n", now, me)
  }

finished:
  /* done: its locals no longer matter */
  atomic { sends = 0; myL = 0; myGen = 0 }
}

init {
  atomic {
    run Executor(1);
    run Executor(2)
  }
}
