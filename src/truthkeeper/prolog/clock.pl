:- module(clock,
          [ advance/3,              % +M, +Now, -Next
            end_fact/4              % +M, +Id, +ValidTo, +RA
          ]).
:- use_module(store, [fact/10, retracted/4, timed/3, store_now/2, due/6, mark_timed/7,
                      end_known/4]).
:- use_module(dominance, [recompute_slot/3, slot_groups/2, pass_facts/5]).
:- use_module(members, [update_members/4]).
:- use_module(library(lists), [member/2, max_member/2]).
:- use_module(library(aggregate), [aggregate_all/3]).
:- use_module(library(error), [existence_error/2, permission_error/3, domain_error/2]).

/** <module> The memory's clock and the ends of facts

A slot whose facts begin or end after they were written is timed
(store:timed/3): its heads are those at the memory's clock
(dominance:heads_at/6). advance/3 moves the clock and recomputes the timed
slots a begin or an end has passed; end_fact/4 records that a fact stopped
being true. Both write the store; dominance recomputes the heads.
*/

:- det(advance/3).
:- det(end_fact/4).

%!  advance(+M, +Now, -Next) is det.
%
%   Move the memory's clock to Now: the timed slots with a fact that begins or
%   ends after the old clock and by Now get their heads at Now. Next is the
%   earliest time after Now at which a timed slot's facts begin or end (none
%   when there is none): the clock must be advanced again by then. A clock that
%   goes back (a caller's clock, a system clock set back) is rewound.
advance(M, Now, Next) :-
    once(store_now(M, Old)),
    retractall(store_now(M, _)),
    assertz(store_now(M, Now)),
    (   Old == none
    ->  findall(S-A-slot, timed(M, S, A), Due0),          % every timed slot again
        forall(( due(M, B, T, S1, A1, P1), T =< Now ), retract(due(M, B, T, S1, A1, P1)))
    ;   Now < Old
    ->  rewind(M, Due0)
    ;   passed_due(M, Old, Now, Due0)
    ),
    sort(Due0, Due),
    slot_groups(Due, Slots),                      % S-A-Parts per slot
    forall(member(S-A-Parts, Slots), pass_slot(M, S, A, Parts, Old)),
    next_due(M, Now, Next).

% passed_due(+M, +Old, +Now, -SlotParts): the slots (S-A-Part) with a noted time in
% (Old, Now], those notes taken out: the buckets in between when they are few, else every
% note.
passed_due(M, Old, Now, Slots) :-
    B0 is Old >> 20, B1 is Now >> 20,
    (   B1 - B0 =< 64
    ->  findall(B-T-S-A-P, ( between(B0, B1, B), due(M, B, T, S, A, P), T =< Now ), Hits)
    ;   findall(B-T-S-A-P, ( due(M, B, T, S, A, P), T =< Now ), Hits)
    ),
    forall(member(B-T-S-A-P, Hits), once(retract(due(M, B, T, S, A, P)))),
    findall(S-A-P, member(_-_-S-A-P, Hits), Slots).

% rewind(+M, -SlotParts): the clock went back: which slots are timed and when they change
% are noted again from every fact, as if each were written at the new clock (a fact that
% began before the old clock may begin after the new one); every timed slot is derived
% again (the ones timed at the old clock among them: a fact that ended by the old clock
% may not have ended by the new one).
rewind(M, Slots) :-
    retractall(timed(M, _, _)),
    retractall(due(M, _, _, _, _, _)),
    forall(fact(M, Id, S, A, K, VF, VT, _, _, _),
           (   timed(M, S, A)          % noted with all its facts when it became timed
           ->  true
           ;   mark_timed(M, S, A, Id, K, VF, VT)
           )),
    findall(S-A-slot, timed(M, S, A), Slots).

% pass_slot(+M, +S, +A, +Parts, +Old): the clock passed a time of these parts of the
% slot: a set's members alone (members:update_members/4), or the facts alone where the
% slot keeps its front (dominance:pass_facts/5), else the whole slot
pass_slot(M, S, A, Parts, Old) :-
    (   \+ memberchk(slot, Parts),
        findall(V, member(m(V), Parts), Vs),
        findall(Id, member(f(Id), Parts), Ids),
        (   Ids == []
        ->  update_members(M, S, A, Vs)
        ;   Vs == [], Old \== none
        ->  pass_facts(M, S, A, Ids, Old)
        )
    ->  true
    ;   recompute_slot(M, S, A)
    ).

% next_due(+M, +Now, -Next): the earliest noted time after Now within the next buckets; a
% time no later than any noted one (the end of those buckets) when they hold none; none
% when nothing is noted.
next_due(M, Now, Next) :-
    B0 is Now >> 20, B1 is B0 + 64,
    (   between(B0, B1, B),
        aggregate_all(min(T), ( due(M, B, T, _, _, _), T > Now ), Min)
    ->  Next = Min
    ;   due(M, _, _, _, _, _)
    ->  Next is (B1 + 1) << 20
    ;   Next = none
    ).

%!  end_fact(+M, +Id, +ValidTo, +RA) is det.
%
%   The fact stopped being true at ValidTo (an end event recorded at the
%   transaction time RA): its slot becomes timed and its heads are computed
%   again; what its valid_to was before RA stays known (store:end_known/4, for
%   as_of at an earlier transaction time). RA none: the undo of the end last
%   applied, whose journal commit failed (ValidTo is the valid_to before it).
%   @error existence_error(fact, Id)
%   @error permission_error(end, retracted_fact, Id)
%   @error domain_error(valid_to_after_valid_from, Id)
end_fact(M, Id, VT, RA) :-
    (   \+ fact(M, Id, _, _, _, _, _, _, _, _)
    ->  existence_error(fact, Id)
    ;   retracted(M, Id, _, _)
    ->  permission_error(end, retracted_fact, Id)
    ;   true
    ),
    once(fact(M, Id, S, A, K, VF, _, _, Tier, Src)),
    (   VT \== none, VT =< VF
    ->  domain_error(valid_to_after_valid_from, Id)
    ;   true
    ),
    once(retract(store:fact(M, Id, S, A, K, VF, VT0, RA0, Tier, Src, Json))),
    assertz(store:fact(M, Id, S, A, K, VF, VT, RA0, Tier, Src, Json)),
    (   RA == none                                % undone: the last end's record goes
    ->  findall(R, store:end_known(M, Id, _, R), Rs),
        ( max_member(Last, Rs) -> retractall(store:end_known(M, Id, _, Last)) ; true )
    ;   store:end_known(M, Id, VT0, RA)           % a slot loaded again replays its ends
    ->  true
    ;   assertz(store:end_known(M, Id, VT0, RA))
    ),
    mark_timed(M, S, A, Id, K, VF, VT),
    (   K = m(V, _),
        update_members(M, S, A, [V])
    ->  true
    ;   recompute_slot(M, S, A)
    ).
