:- module(context,
          [ ended_values/7,       % +M, +Policy, +Slots, +Cands, +Heads, +Drops, -EndDrops
            disputes/5            % +Cands, +Heads, +Drops, +CandidateDrops, -Disputes
          ]).
:- use_module(store, [store_now/2, fact/10, retracted/4, member_claim/5, timed/3, record/3]).
:- use_module(policies, [policy_dominates/3]).
:- use_module(library(apply), [include/3, maplist/3]).
:- use_module(library(pairs), [pairs_values/2, group_pairs_by_key/2]).
:- use_module(library(lists), [member/2]).
:- use_module(library(ordsets), [ord_memberchk/2]).

/** <module> What the store says of a context's kept candidates besides Phi_T

Phi_T (phi:phi_store/5) drops a candidate that another candidate or one of the
memory's heads dominates. Two more things the memory knows are told here, for the
candidates it kept:

  - An ended value (ended_values/7). A fact whose valid_to has passed is no head, so
    it dominates nothing; but it says that its value stopped being true then. A
    candidate restating that value from before the end (Ana lived in Lisbon in 2021,
    where the memory holds Lisbon from 2020, ended in 2023) is stale, unless a head
    of its slot holds the value still. The end is judged as the policy judges a
    claim, made at the valid_to by the ended fact's source and tier, that the value
    left (the key m(Value, 0), as a set's member leaves): under the default policy
    an end by a lower tier than the candidate's does not make it stale.
  - A dispute (disputes/5): a kept candidate and the heads of its slot that disagree
    with it, neither dominating the other.
*/

:- det(ended_values/7).
:- det(disputes/5).

%!  ended_values(+M, +Policy, +Slots, +Cands, +Heads, +Drops, -EndDrops) is det.
%
%   Slots are (SlotKey-A)-Layers, Cands the live candidates, Heads the heads phi_store
%   read (c(-(head, H), SlotKey, Record)), Drops the candidates' drops so far (by
%   index). EndDrops are I-(-(ended, F)), by index: a kept candidate, present, whose
%   value no head of its slot (of a set, about its member) holds, and whose value a live
%   fact F of its slot held until a valid_to at or before the clock and after the
%   candidate's valid_from, the end dominating the candidate under Policy. Only the
%   slots with a fact that ends are looked at (timed/3).
ended_values(M, P, Slots, Cands, Heads, Drops, EndDrops) :-
    (   timed(M, _, _)                            % a memory with no end pays one lookup
    ->  include(ending(M), Slots, Timed)
    ;   Timed = []
    ),
    (   Timed == []
    ->  EndDrops = []
    ;   once(store_now(M, Now)),
        kept(Cands, Drops, Kept),
        maplist(by_group, Heads, HK0), keysort(HK0, HK), group_pairs_by_key(HK, HG),
        findall(I-(-(ended, F)),
                ( member(c(I, K, R), Kept), memberchk((K-A)-Ss, Timed),
                  ended_value(M, P, Now, Ss, A, K, R, HG, F) ),
                EndDrops)
    ).

ending(M, (_-A)-Ss) :- member(S, Ss), timed(M, S, A), !.

% ended_value(+M, +P, +Now, +Layers, +A, +K, +Record, +HeadGroups, -F): the first live
% fact F (in recording order) of the candidate's value whose end makes it stale
ended_value(M, P, Now, Ss, A, K, R, HG, F) :-
    arg(2, R, V),
    V \= m(_, 0),
    ( V = m(X, 1) -> G = K-X, Left = m(X, 0) ; G = K, Left = m(V, 0) ),
    \+ ( memberchk(G-Hs, HG), member(_-V2, Hs), V2 == V ),
    Now \== none,
    arg(3, R, T),
    once(( member(S, Ss),
           (   V = m(X, _)
           ->  member_claim(M, S, A, X, F), fact(M, F, S, A, V0, _, VT, _, _, _), V0 == V
           ;   fact(M, F, S, A, V, _, VT, _, _, _)
           ),
           integer(VT), T < VT, VT =< Now,
           \+ retracted(M, F, _, _),
           once(record(M, F, r(_, _, _, RA, Rank, Src, Meta))),
           policy_dominates(P, r(F, Left, VT, RA, Rank, Src, Meta), R) )).

% disputes(+Cands, +Heads, +Drops, +CandidateDrops, -Disputes): d(Indexes, HeadIds), the
% kept candidates of a slot (of a set, of one member) whose value none of its heads that
% no record of the context dominates (Drops: -(head, H)-free) holds, with those heads:
% they do not dominate one another (the candidates were kept, the heads are free). One
% entry a slot, however many candidates and heads (a poll's n x n pairs are not listed).
disputes(Cands, Heads, Drops, CDrops, Disputes) :-
    findall(H, member(-(head, H)-free, Drops), Free0),
    (   Free0 == []
    ->  Disputes = []
    ;   sort(Free0, Free),
        include(free_head(Free), Heads, FreeHeads),
        maplist(by_group, FreeHeads, HK0), keysort(HK0, HK), group_pairs_by_key(HK, HG),
        kept(Cands, CDrops, Kept),                % both by index, ascending
        maplist(by_group, Kept, CK0), keysort(CK0, CK), group_pairs_by_key(CK, CG),
        merge_groups(CG, HG, Disputes, [])
    ).

free_head(Free, c(-(head, H), _, _)) :- ord_memberchk(H, Free).

% by_group(+Candidate, -Keyed): keyed by slot (of a set, by slot and member), as
% slot_time_keyed/2 groups them, with its value key
by_group(c(I, K, R), G-(I-V)) :-
    arg(2, R, V),
    ( V = m(M, _) -> G = K-M ; G = K ).

kept([], _, []).
kept([C|Cs], [D-_|Ds], Ks) :- arg(1, C, I), D < I, !, kept([C|Cs], Ds, Ks).
kept([C|Cs], [D-_|Ds], Ks) :- arg(1, C, D), !, kept(Cs, Ds, Ks).
kept([C|Cs], Ds, [C|Ks]) :- kept(Cs, Ds, Ks).

merge_groups([], _, D, D) :- !.
merge_groups(_, [], D, D) :- !.
merge_groups([GC-Cs|CGs], [GH-Hs|HGs], D0, D) :-
    compare(O, GC, GH),
    (   O == (<)
    ->  merge_groups(CGs, [GH-Hs|HGs], D0, D)
    ;   O == (>)
    ->  merge_groups([GC-Cs|CGs], HGs, D0, D)
    ;   pairs_values(Hs, HVs0), sort(HVs0, HVs),
        findall(I, ( member(I-V, Cs), \+ ord_memberchk(V, HVs) ), Is),
        (   Is == []
        ->  D0 = D1
        ;   findall(H, member(-(head, H)-_, Hs), HIds),
            D0 = [d(Is, HIds)|D1]
        ),
        merge_groups(CGs, HGs, D1, D)
    ).

