:- module(reclaim,
          [ drop_heads/4,        % +M, +S, +A, +Heads
            clear_heads/3,       % +M, +S, +A
            reclaim_after/0
          ]).
:- use_module(store, [kept_head/4]).

:- dynamic tick/0.

/** <module> A slot's heads leave, and the clauses they were are reclaimed

A retracted clause stays in its predicate's clause list (and in the buckets of
its indexes) until SWI-Prolog's clause garbage collector reclaims it; every
lookup until then steps over it. SWI-Prolog starts that collector when a
retraction finds enough garbage (by size, against all the code loaded, or by
what lookups skipped since the last one); a burst of retractions followed only
by reads can find neither: the reads pay for the garbage, the collector never
comes. A slot whose thousands of heads one newer fact replaced (a poll, then an
answer) left that many dead kept_head/4 clauses where each of the next reads of
its heads walked them all: filter of its 8,000 facts took 0.9 s, and 0.04 s
after a collection (2026-12-06).

So a slot's heads leave through this module, which collects the clauses now
when one drop leaves at least 256 of them: a collection costs about what
walking the dirty predicates' clauses once costs (0.05-1 ms at 100,000 facts),
against a drop that large, so it costs a constant share of the drop.
*/

:- det(drop_heads/4).
:- det(clear_heads/3).
:- det(reclaim_after/0).

%!  drop_heads(+M, +S, +A, +Heads) is det.
%
%   The slot's kept heads Heads are heads no more.
drop_heads(M, S, A, Heads) :-
    forall(member(H, Heads), retractall(kept_head(M, S, A, H))),
    length(Heads, N),
    dropped(N).

%!  clear_heads(+M, +S, +A) is det.
%
%   The slot keeps no head (it is derived anew).
clear_heads(M, S, A) :-
    aggregate_all(count, retract(kept_head(M, S, A, _)), N),
    dropped(N).

% dropped(+N): N kept heads just left. Inside a transaction (a write) the clauses are
% not garbage before it commits: the collection waits for reclaim_after/0 then. It runs
% with the `gc` thread stopped first: a collection that thread runs may have begun before
% the drop (the retractions themselves may start it), and while it runs, a collection
% asked for is none. SWI-Prolog starts the thread again at the next collection it needs
% (forget:forget/1 too).
dropped(N) :-
    (   N < 256
    ->  true
    ;   current_transaction(_)
    ->  flag(tk_reclaim, _, 1)
    ;   collect
    ).

%!  reclaim_after is det.
%
%   After a transaction that dropped many heads (a write), the collection it put off.
reclaim_after :-
    (   flag(tk_reclaim, 1, 0)
    ->  collect
    ;   true
    ).

% collect: the database's generation moves past the drop's first (a clause erased at
% the generation a collection starts in is no garbage to it: a transaction's commit
% erases at the generation it ends in)
collect :-
    set_prolog_gc_thread(stop),
    assertz(tick), retract(tick),
    garbage_collect_clauses.
