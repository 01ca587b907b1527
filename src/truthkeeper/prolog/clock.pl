:- module(clock,
          [ advance/3,              % +M, +Now, -Next
            end_fact/3              % +M, +Id, +ValidTo
          ]).
:- use_module(store, [fact/10, retracted/4, timed/3, store_now/2]).
:- use_module(dominance, [recompute_slot/3]).
:- use_module(library(lists), [member/2]).
:- use_module(library(aggregate), [aggregate_all/3]).
:- use_module(library(error), [existence_error/2, permission_error/3, domain_error/2]).

/** <module> The memory's clock and the ends of facts

A slot whose facts begin or end after they were written is timed
(store:timed/3): its heads are those at the memory's clock
(dominance:heads_at/6). advance/3 moves the clock and recomputes the timed
slots a begin or an end has passed; end_fact/3 records that a fact stopped
being true. Both write the store; dominance recomputes the heads.
*/

:- det(advance/3).
:- det(end_fact/3).

%!  advance(+M, +Now, -Next) is det.
%
%   Move the memory's clock to Now: the timed slots with a fact that begins or
%   ends after the old clock and by Now get their heads at Now. Next is the
%   earliest time after Now at which a timed slot's facts begin or end (none
%   when there is none): the clock must be advanced again by then.
advance(M, Now, Next) :-
    once(store_now(M, Old)),
    retractall(store_now(M, _)),
    assertz(store_now(M, Now)),
    (   Old == none
    ->  findall(S-A, timed(M, S, A), Due0)
    ;   findall(S-A, ( timed(M, S, A), fact(M, _, S, A, _, VF, VT, _, _, _),
                       ( passed(Old, Now, VF) ; VT \== none, passed(Old, Now, VT) ) ), Due0)
    ),
    sort(Due0, Due),
    forall(member(S-A, Due), recompute_slot(M, S, A)),
    (   aggregate_all(min(T), ( timed(M, S1, A1), fact(M, _, S1, A1, _, VF1, VT1, _, _, _),
                                ( T = VF1 ; VT1 \== none, T = VT1 ), T > Now ), Min)
    ->  Next = Min
    ;   Next = none
    ).

passed(Old, Now, T) :- T > Old, T =< Now.

%!  end_fact(+M, +Id, +ValidTo) is det.
%
%   The fact stopped being true at ValidTo (an end event): its slot becomes
%   timed and its heads are computed again. ValidTo none reopens it (the undo
%   of an end whose journal commit failed).
%   @error existence_error(fact, Id)
%   @error permission_error(end, retracted_fact, Id)
%   @error domain_error(valid_to_after_valid_from, Id)
end_fact(M, Id, VT) :-
    (   \+ fact(M, Id, _, _, _, _, _, _, _, _)
    ->  existence_error(fact, Id)
    ;   retracted(M, Id, _, _)
    ->  permission_error(end, retracted_fact, Id)
    ;   true
    ),
    once(fact(M, Id, S, A, K, VF, _, RA, Tier, Src)),
    (   VT \== none, VT =< VF
    ->  domain_error(valid_to_after_valid_from, Id)
    ;   true
    ),
    once(retract(store:fact(M, Id, S, A, K, VF, _, RA, Tier, Src, Json))),
    assertz(store:fact(M, Id, S, A, K, VF, VT, RA, Tier, Src, Json)),
    ( timed(M, S, A) -> true ; assertz(timed(M, S, A)) ),
    recompute_slot(M, S, A).
