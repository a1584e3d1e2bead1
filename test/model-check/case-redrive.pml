/*
 * The reconciliation of a call whose outcome is unknown (UNRESOLVED): its case is checked by the
 * reconciler, which resolves it or redrives it itself; a person resolves or redrives it by hand; a
 * redrive re-executes the call through a fresh, fenced claim — all concurrently, every case move a
 * compare-and-set on the case's version. Spin explores every interleaving and finds no violation
 * of P1-P4.
 *
 * Actors (ARCHITECTURE.md, "Model-checked protocols"):
 *   Clock     — abstract time (one global clock), one unit a step.
 *   S         — the legacy downstream (services/legacy-filing/filing-store.ts): commits a request
 *               only while its effect deadline has not passed (check and commit in one step).
 *   Checker   — the reconciler's visits to the open, due case (services/reconciler/check-case.ts,
 *               checkCase; moves through moveCase of services/reconciler/case-moves.ts): applied
 *               -> resolved_succeeded; a decisive not-applied -> resolved_failed, or (once) its own
 *               redrive; unknown -> stays open, or needs_manual once its schedule is spent.
 *   Operator  — a person making one move at any time (libs/reconcile/operations.ts; the moves
 *               case-model.ts allows, the plans of redrive-rule.ts): resolveByHand (succeeded or
 *               failed) or redrive.
 *   SecondRedrive — the same redrive made twice from the same case version (a second person,
 *               a repeated command), racing the first.
 *   Redriven  — an executor running a re-submitted call (libs/guards/idempotency.ts claim,
 *               libs/guards/execute.ts, the fenced send of libs/integrations/status-check-adapter.ts).
 * Any process may be descheduled for any time between two steps (SIGSTOP, GC pause).
 *
 * Where the case starts: the call ended UNRESOLVED, so its idempotency record is completed
 * UNRESOLVED and the case is open. Its last send may still be queued at S: its effect deadline D0
 * (in the shared ledger) is chosen nondeterministically, in the past or still ahead. (An earlier
 * owner frozen before its send is covered by status-check-fenced.pml: its deadline is at most its
 * lease end, which passed before the call could end UNRESOLVED, so that send can never commit.)
 *
 * Modelling choices, from the code:
 * - Case moves (CASE_TRANSITIONS): open -> open | resolved_succeeded | resolved_failed |
 *   needs_manual; needs_manual -> resolved_* | open (person); resolved_failed -> open (person);
 *   resolved_succeeded is final. The checker moves only open cases; people resolve open or
 *   needs_manual cases and redrive needs_manual or resolved_failed ones.
 * - A redrive here always re-submits the call (redrivePlan "resubmit" with retireUnresolved; a
 *   redrive that only rechecks re-executes nothing and is a special case): the case moves to open
 *   FIRST (CAS), then the UNRESOLVED answer is retired (settled to expire, only if it is still
 *   UNRESOLVED), then the call is published. Before moving, the redrive peeks at the record: a live
 *   claim or a recorded verdict refuses it (answeredByResolution). The reconciler's own redrive
 *   takes the same path from an open case. Every round after a redrive is a re-submitted round:
 *   the checker reads the record first (resubmissionVerdict) and counts a status check's
 *   "not-applied" as unknown ("not yet").
 * - resolveByHand holds the call's key (holdCall: a claim with a lease) before the CAS, refuses
 *   while the call is running, releases the hold when the CAS loses, and afterwards records the
 *   verdict (completes the held key, or settles an UNRESOLVED record).
 * - The re-executing executor checks first: its look-up before sending is a status check (lookup
 *   + ledger), so it never sends while an earlier send may still commit. It sends at most once.
 *
 * Properties:
 *   P1 — at most one effect: S commits at most once.
 *   P2 — no automatic "failed" (the checker's resolved_failed, an executor's definite failure)
 *        while an effect exists or can still come from a send made before it. A person's verdict is
 *        a judgement and is not checked.
 *   P3 — a resolved case never re-executes: an executor of a re-submission sends only for a redrive
 *        that moved the case by CAS, and when the case is resolved at that moment, that resolution
 *        came AFTER the redrive's move (a resolution before it is undone by the redrive's own move;
 *        one after it is what the code allows: the person resolved a call already re-submitted).
 *   P4 — one execution per redrive: a re-submission is published only by a redrive whose CAS
 *        succeeded, once; two redrives from the same case version publish at most one. (A
 *        redrive after an earlier re-execution ended without an effect — failed, or UNRESOLVED
 *        again — is a new move and may run the call again: what holds per case is P1. Two
 *        deliveries of one re-submission are two executors on one key, the take-over explored by
 *        status-check-fenced.pml.)
 *
 * Define RESOLUTION_WINS (spin -DRESOLUTION_WINS -a) to check a stronger promise: a resolution
 * whose move lands before the re-submission claims the key keeps the re-submission from running.
 * Spin finds it broken two ways: the person's hold lapses while their process is stopped between
 * the move and recording the verdict (the re-submission takes the key over); or the hold finds
 * the record still UNRESOLVED (nothing to hold), the redrive then retires it, and the verdict's
 * settle finds nothing UNRESOLVED to settle (the re-submission claims the key afresh).
 */

#define TMAX    7   /* the clock stops here: bounds the state space */
#define T0      2   /* the case opens at this time */
#define LEASE   3   /* an executor's claim lease */
#define HOLD    2   /* the lease of a person's hold on the call's key */
#define SENDTO  1   /* send timeout: effect deadline min(now + SENDTO, lease end) */
#define POLLS   1   /* status checks after the re-executed send */
#define VISITS  2   /* visits of the reconciler; any visit may be the last of its schedule */
#define NREQ    4   /* the original send + one per re-submission (at most three) */

/* case (libs/ports/case-store.ts): state and version */
#define OPEN  1
#define NM    2   /* needs_manual */
#define RS    3   /* resolved_succeeded */
#define RF    4   /* resolved_failed */
byte cstate = OPEN;
byte ver = 1;
bool redriven = false;   /* a redrive has moved the case: rounds from now on are re-submitted ones */
byte moves = 0;          /* case moves so far: orders the CASes (P3) */
byte resolvedAt = 0;     /* the move that last resolved the case */

/* idempotency record of the call's key (libs/ports/idempotency-store.ts) */
#define ABSENT     0   /* never claimed, retired, or released after a definite failure */
#define INFLIGHT   1
#define C_UNRES    2   /* completed UNRESOLVED */
#define C_SUCCESS  3   /* completed SUCCESS: an executor's answer, or a verdict */
#define C_FAILED   4   /* completed EXECUTION_ERROR: a verdict */
byte rec = C_UNRES;
byte owner = 0;
byte leaseEnd = 0;
byte gen = 1;            /* claims that sent so far: 1 is the original call's */

/* the shared ledger: the largest effect deadline noted for the call */
byte maxd = 0;

/* requests on their way to S */
#define SENT      1
#define COMMITTED 2
byte reqState[NREQ];
byte reqD[NREQ];
byte reqGen[NREQ];
byte nreq = 0;
byte commits = 0;

/* P2: sends made under claims 1..failedUpTo must never commit */
byte failedUpTo = 0;
/* P4: re-submissions published, redrives that won their CAS */
byte published = 0;
byte redrivesWon = 0;

byte now = T0;

active proctype Clock() {
end:
  do
  :: atomic { now < TMAX -> now++ }
  od
}

#define PROCESS(i) \
  :: atomic { \
       reqState[i] == SENT && now <= reqD[i] -> \
         reqState[i] = COMMITTED; \
         commits++; \
         printf("t=%d S commits request %d\n", now, i); \
         assert(commits <= 1);          /* P1 */ \
         assert(reqGen[i] > failedUpTo) /* P2 */ \
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
 * A status check (StatusCheckAdapter.check) in two steps: lookup() starts the lookup of the natural
 * key at t; decide() reads the ledger, possibly much later, and answers. The first step is merged
 * into the step before it where a freeze in between adds nothing status-check-fenced.pml does not
 * already explore.
 */
#define APPLIED     1
#define NOT_APPLIED 2
#define UNKNOWN     3
inline lookup() {
  t = now;
  found = (commits > 0)
}
inline decide() {
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
inline statusCheck() {
  atomic { lookup() }
  decide()
}

/* moveCase: the move lands only if the case is still at the version read. */
inline cas(to, ok) {
  atomic {
    if
    :: cstate == st && ver == v ->
         cstate = to; ver++; moves++; ok = true;
         if
         :: to == RS || to == RF -> resolvedAt = moves
         :: else -> skip
         fi
    :: else -> ok = false
    fi
  }
}

/*
 * A redrive that re-submits the call (libs/reconcile/operations.ts redrive; the reconciler's own
 * redrive takes the same path): the case moves to open by CAS from the version read (st, v), the
 * call's UNRESOLVED answer is retired, the call is published and one executor (`executor`) runs
 * it: R13 for the person's redrive, R14 for the same redrive made twice, R15 for the reconciler's.
 * A redrive whose move loses publishes nothing. The caller has peeked at the record already.
 */
inline redrive(executor) {
  atomic {
    cas(OPEN, ok);
    if
    :: ok -> redriven = true; redrivesWon++; v = moves;
         printf("t=%d redrive: the case is open again; R%d will run the call\n", now, executor)
    :: else -> skip
    fi
  };
  if
  :: ok ->
       /* retire the UNRESOLVED answer (settle: only an UNRESOLVED record is touched) */
       atomic { if :: rec == C_UNRES -> rec = ABSENT :: else -> skip fi };
       /* publish the re-submission: one executor picks it up */
       atomic {
         published++;
         assert(published <= redrivesWon);   /* P4 */
         run Redriven(executor, v)
       }
  :: else -> skip
  fi
}

/* The reconciler: up to VISITS visits to the open case (checkCase). */
proctype Checker() {
  byte st;
  byte v;
  byte visits = 0;
  byte t;
  byte answer;
  bool found;
  bool rr;        /* a re-submitted round */
  bool ok;
  byte verdict;   /* what the record says (re-submitted rounds) */
  bool autoRedriven = false;

  do
  :: visits < VISITS ->
       /* A due, open case is read; in a re-submitted round its record is peeked at
          (resubmissionVerdict); then the status check's lookup starts. */
end_due:
       atomic {
         cstate == OPEN ->
           st = cstate;
           v = ver;
           rr = redriven;
           visits++;
           if
           :: rr && rec == C_SUCCESS -> verdict = RS
           :: rr && rec == C_FAILED -> verdict = RF
           :: rr && rec == C_UNRES -> verdict = NM   /* ended UNRESOLVED again: a person */
           :: else -> verdict = 0                     /* not re-submitted, or no answer yet */
           fi;
           lookup()
       }
       if
       :: verdict != 0 ->
            atomic { t = 0; found = false };
            cas(verdict, ok);
            verdict = 0
       :: rr && verdict == 0 ->
            decide();
            if
            :: answer == APPLIED -> answer = 0; cas(RS, ok)   /* nothing delivered: the executor answered */
            :: else ->   /* unknown; "not-applied" only means "not yet" */
                 answer = 0;
                 if
                 :: visits < VISITS -> cas(OPEN, ok)   /* the next check is scheduled */
                 :: true -> cas(NM, ok)                /* the schedule is spent: a person */
                 fi
            fi
       :: !rr ->
            decide();
            if
            :: answer == APPLIED ->
                 answer = 0;
                 cas(RS, ok);
                 if
                 :: ok -> atomic { if :: rec == C_UNRES -> rec = C_SUCCESS :: else -> skip fi }
                 :: else -> skip
                 fi
            :: answer == NOT_APPLIED ->
                 answer = 0;
                 if
                 :: true ->
                      /* resolved_failed, answered as a definite failure */
                      atomic {
                        cas(RF, ok);
                        if
                        :: ok ->
                             assert(commits == 0);   /* P2 */
                             failedUpTo = gen;
                             printf("t=%d reconciler: resolved_failed (not applied)\n", now)
                        :: else -> skip
                        fi
                      };
                      if
                      :: ok -> atomic { if :: rec == C_UNRES -> rec = C_FAILED :: else -> skip fi }
                      :: else -> skip
                      fi
                 :: !autoRedriven && !(rec == INFLIGHT && now <= leaseEnd) &&
                    rec != C_SUCCESS && rec != C_FAILED ->
                      /* or the reconciler's own redrive, once: the case stays open (CAS), the
                         call is re-executed through a fresh, fenced claim */
                      autoRedriven = true;
                      redrive(15)
                 fi
            :: answer == UNKNOWN ->
                 answer = 0;
                 if
                 :: visits < VISITS -> cas(OPEN, ok)   /* the next check is scheduled */
                 :: true -> cas(NM, ok)                /* the schedule is spent: a person */
                 fi
            fi
       fi;
       atomic { st = 0; v = 0; rr = false; ok = false }
  :: else -> break
  od
}

/* An executor running a re-submission (published by the redrive whose move was `myMove`). */
proctype Redriven(byte me; byte myMove) {
  byte t;
  byte d;
  byte myL;
  byte myGen;
  byte answer;
  byte polls = 0;
  bool found;
#ifdef RESOLUTION_WINS
  bool resolvedAtClaim;
#endif

end_claim:
  atomic {
    if
    :: rec == ABSENT ->
         rec = INFLIGHT; owner = me; leaseEnd = now + LEASE; myL = leaseEnd; gen++; myGen = gen;
         printf("t=%d R%d claims the key, lease until %d\n", now, me, myL)
    :: rec == INFLIGHT && owner != me && now > leaseEnd ->
         owner = me; leaseEnd = now + LEASE; myL = leaseEnd; gen++; myGen = gen;
         printf("t=%d R%d takes the key over, lease until %d\n", now, me, myL)
    :: rec == C_UNRES || rec == C_SUCCESS || rec == C_FAILED ->
         printf("t=%d R%d: answered from the record, not run\n", now, me);
         goto finished
    fi;
#ifdef RESOLUTION_WINS
    resolvedAtClaim = (cstate == RS || cstate == RF);
#endif
    lookup()   /* checks first */
  }
  decide();
  if
  :: answer == APPLIED -> answer = 0; goto succeeded
  :: answer == NOT_APPLIED -> answer = 0
  :: answer == UNKNOWN -> answer = 0; goto unresolved
  fi;
  d = ((now + SENDTO < myL) -> now + SENDTO : myL);
  if
  :: now < myL -> skip
  :: else -> goto unresolved
  fi;
  atomic {
    if
    :: d > maxd -> maxd = d
    :: else -> skip
    fi
  }
  atomic {
    /* P3: a re-execution comes from a redrive's move, and a resolution it finds came after it */
    assert(myMove > 0 && (!(cstate == RS || cstate == RF) || resolvedAt > myMove));
#ifdef RESOLUTION_WINS
    assert(!resolvedAtClaim);
#endif
    printf("t=%d R%d sends request %d with deadline %d\n", now, me, nreq, d);
    reqState[nreq] = SENT;
    reqD[nreq] = d;
    reqGen[nreq] = myGen;
    nreq++;
    d = 0
  }
  do
  :: polls < POLLS ->
       polls++;
       statusCheck();
       if
       :: answer == APPLIED -> answer = 0; goto succeeded
       :: answer == NOT_APPLIED -> answer = 0; goto failed
       :: answer == UNKNOWN -> answer = 0
       fi
  :: else -> goto unresolved
  od;

succeeded:
  atomic {
    if
    :: owner == me && rec == INFLIGHT -> rec = C_SUCCESS
    :: else -> skip
    fi;
    goto finished
  }
failed:
  /* a definite failure releases the key; reported only by its owner */
  atomic {
    if
    :: owner == me && rec == INFLIGHT ->
         rec = ABSENT;
         assert(commits == 0);   /* P2 */
         failedUpTo = gen;
         printf("t=%d R%d reports FAILED (not applied)\n", now, me)
    :: else -> skip
    fi;
    goto finished
  }
unresolved:
  atomic {
    if
    :: owner == me && rec == INFLIGHT -> rec = C_UNRES
    :: else -> skip
    fi
  }
finished:
  atomic { myL = 0; myGen = 0; polls = 0 }
}

/* A person making one move on the case: resolveByHand (succeeded / failed) or redrive. */
proctype Operator(byte me) {
  byte st;
  byte v;
  byte to;
  bool held = false;
  bool ok;

  /* The person's command reads the case (cases.get), picks its move, and takes the first step
     that looks at the call's key: for a resolution, holdCall (claim the key for the verdict); for a
     redrive, answeredByResolution (a live claim or a recorded verdict refuses the re-submission). */
  atomic {
    st = cstate;
    v = ver;
    if
    :: st == OPEN || st == NM ->   /* resolveByHand: only open and needs_manual cases */
         if
         :: to = RS
         :: to = RF
         fi;
         if
         :: rec == ABSENT || (rec == INFLIGHT && now > leaseEnd) ->
              rec = INFLIGHT; owner = me; leaseEnd = now + HOLD; held = true
         :: rec == INFLIGHT && now <= leaseEnd -> goto done   /* the call is running: refused */
         :: else -> held = false                             /* a completed record: nothing held */
         fi
    :: st == NM || st == RF ->     /* redrive: only needs_manual and resolved_failed cases */
         to = OPEN;
         if
         :: (rec == INFLIGHT && now <= leaseEnd) || rec == C_SUCCESS || rec == C_FAILED -> goto done
         :: else -> skip
         fi;
         if
         :: run SecondRedrive(st, v)
         :: skip
         fi
    :: else -> goto done           /* resolved_succeeded is final; nothing else to do */
    fi
  }
  if
  :: to != OPEN ->
       cas(to, ok);
       if
       :: !ok ->
            /* lost the race: give the hold back */
            atomic {
              if
              :: held && owner == me && rec == INFLIGHT -> rec = ABSENT
              :: else -> skip
              fi
            }
            goto done
       :: else ->
            if
            :: to == RS -> printf("t=%d person %d: resolved_succeeded by hand\n", now, me)
            :: else -> printf("t=%d person %d: resolved_failed by hand\n", now, me)
            fi
       fi;
       /* deliver: the verdict becomes the call's record */
       atomic {
         if
         :: held && owner == me && rec == INFLIGHT -> rec = (to == RS -> C_SUCCESS : C_FAILED)
         :: !held && rec == C_UNRES -> rec = (to == RS -> C_SUCCESS : C_FAILED)
         :: else -> skip
         fi
       }
  :: else -> redrive(13)
  fi;
done:
  atomic { st = 0; v = 0; to = 0; held = false; ok = false }
}

/* The same redrive from the same case version, made a second time. */
proctype SecondRedrive(byte st; byte v) {
  bool ok;
  redrive(14)
}

init {
  atomic {
    /* the original call's last send, still queued at S, with its deadline in the ledger */
    if
    :: maxd = 1   /* already past: the send can no longer commit */
    :: maxd = 3   /* still ahead: it may commit after the case opened */
    fi;
    reqState[0] = SENT;
    reqD[0] = maxd;
    reqGen[0] = 1;
    nreq = 1;
    run Checker();
    run Operator(3)
  }
}
