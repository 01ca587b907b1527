:- module(context,
          [ ended_values/7,       % +M, +Policy, +Slots, +Cands, +Heads, +Drops, -EndDrops
            ended_claims/4,       % +M, +Slots, +Cands, -Ends
            disputes/5            % +Cands, +Heads, +Drops, +CandidateDrops, -Disputes
          ]).
:- use_module(store, [store_now/2, fact/10, retracted/4, member_claim/5, timed/3, record/3,
                      mem_policy/2]).
:- use_module(policies, [policy_dominates/3]).
:- use_module(claims, [view_heads/5]).
:- use_module(settree, [set_tree/2, in_set/2]).
:- use_module(library(apply), [include/3, maplist/3, foldl/4]).
:- use_module(library(assoc), [list_to_assoc/2, get_assoc/3, ord_list_to_assoc/2]).
:- use_module(library(pairs), [pairs_values/2, group_pairs_by_key/2]).
:- use_module(library(lists), [member/2]).
:- use_module(library(yall)).

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
:- det(ended_claims/4).
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
        held_values(Heads, Held),
        slots_by_key(Timed, ByKey),
        findall(K-c(I, A, Ss, R),
                ( member(c(I, K, R), Kept), get_assoc(K, ByKey, A-Ss), unheld(Held, K, R) ),
                Asked0),
        keysort(Asked0, Asked), group_pairs_by_key(Asked, BySlot),
        foldl(slot_ended(M, P, Now), BySlot, EndDrops0, []),
        sort(EndDrops0, EndDrops)                 % by index
    ).

ending(M, (_-A)-Ss) :- member(S, Ss), timed(M, S, A), !.

% held_values(+Heads, -Held): an assoc from each group of the heads (a slot; of a set, a
% slot and member) to the set (settree:set_tree/2) of the values its heads hold
held_values(Heads, Held) :-
    maplist(by_group, Heads, HK0), keysort(HK0, HK), group_pairs_by_key(HK, HG),
    maplist(group_values, HG, HV),
    list_to_assoc(HV, Held).

group_values(G-IVs, G-Vs) :- pairs_values(IVs, Vs0), set_tree(Vs0, Vs).

% slots_by_key(+Slots, -ByKey): an assoc from each slot key of Slots ((K-A)-Layers) to
% A-Layers (the first, if a key came twice)
slots_by_key(Slots, ByKey) :-
    maplist([(K-A)-Ss, K-(A-Ss)]>>true, Slots, Pairs0),
    keysort(Pairs0, Pairs), group_pairs_by_key(Pairs, Groups),
    maplist([K-[V|_], K-V]>>true, Groups, Firsts),
    ord_list_to_assoc(Firsts, ByKey).


% unheld(+Held, +K, +Record): a candidate that the value is in (not one that it left),
% whose value no head of its group holds
unheld(Held, K, R) :-
    arg(2, R, V),
    V \= m(_, 0),
    ( V = m(X, 1) -> G = K-X ; G = K ),
    \+ ( get_assoc(G, Held, Vs), in_set(Vs, V) ).

% slot_ended(+M, +P, +Now, +K-Candidates, -Drops, ?Tail): the drops of one slot's asked
% candidates. A one-valued slot's facts that ended are read once, by value (a log of
% 2,000 ended facts against as many candidates was 2,000 scans of the slot); a set's are
% read by member (member_claim/5), as the set's heads are, never the whole set.
slot_ended(M, P, Now, _-Cs, D0, D) :-
    Cs = [c(_, A, Ss, R0)|_],
    (   arg(2, R0, m(_, _))
    ->  Ends = none
    ;   findall(V-(F-VT), ( member(S, Ss), fact(M, F, S, A, V, _, VT, _, _, _),
                            integer(VT), VT =< Now, \+ retracted(M, F, _, _) ), Ps0),
        keysort(Ps0, Ps), group_pairs_by_key(Ps, Gs),   % stable: each in recording order
        list_to_assoc(Gs, Ends)
    ),
    foldl(candidate_ended(M, P, Now, Ends), Cs, D0, D).

candidate_ended(M, P, Now, Ends, c(I, A, Ss, R), D0, D) :-
    (   ended_fact(M, P, Now, Ends, A, Ss, R, F)
    ->  D0 = [I-(-(ended, F))|D]
    ;   D0 = D
    ).

% ended_fact(+M, +P, +Now, +Ends, +A, +Layers, +Record, -F): the first live fact F (in
% recording order) of the candidate's value whose end makes it stale
ended_fact(M, P, Now, Ends, A, Ss, R, F) :-
    arg(2, R, V),
    arg(3, R, T),
    (   V = m(X, 1)
    ->  Left = m(X, 0),
        member(S, Ss), member_claim(M, S, A, X, F),
        fact(M, F, S, A, V0, _, VT, _, _, _), V0 == V,
        integer(VT), VT =< Now, \+ retracted(M, F, _, _)
    ;   Left = m(V, 0),
        get_assoc(V, Ends, Fs),
        member(F-VT, Fs)
    ),
    T < VT,
    end_dominates(M, P, F, Left, VT, R),
    !.

% end_dominates(+M, +P, +F, +Left, +VT, +Record): F's end at VT, as a record of the value
% Left (its value left), dominates the candidate's Record under the policy P
end_dominates(M, P, F, Left, VT, R) :-
    once(record(M, F, r(_, _, _, RA, Rank, Src, Meta))),
    policy_dominates(P, r(F, Left, VT, RA, Rank, Src, Meta), R).

%!  ended_claims(+M, +Slots, +Cands, -Ends) is det.
%
%   For filter's kappa path, where the caller's kappa (not value keys) says whether two
%   statements agree: Ends are I-Fs, a candidate c(I, K, R) of Cands (Slots as
%   phi_store/5 takes them) and the live facts Fs of its slot (of a set, its member's
%   claims that it is in) that ended at or before the clock and after the candidate's
%   valid_from, each end dominating the candidate under the memory's policy as in
%   ended_values/7, and no head of the slot holding its value (whatever the candidate's
%   value: whether they agree is kappa's). Only the slots with a fact that ends are read.
ended_claims(M, Slots0, Cands, Ends) :-
    (   timed(M, _, _)
    ->  once(mem_policy(M, P)), once(store_now(M, Now)),
        maplist(slot_pair, Slots0, Keyed), keysort(Keyed, Sorted),
        group_pairs_by_key(Sorted, Slots),
        slots_by_key(Slots, ByKey),
        findall(I-Fs, ( member(c(I, K, R), Cands), get_assoc(K, ByKey, A-Ss),
                        once(( member(S, Ss), timed(M, S, A) )),
                        findall(F, claim_ended(M, P, Now, A, Ss, R, F), Fs), Fs \== [] ),
                Ends)
    ;   Ends = []
    ).

slot_pair(-(K, S, A), (K-A)-S).

claim_ended(M, P, Now, A, Ss, R, F) :-
    arg(2, R, V),
    arg(3, R, T),
    V \= m(_, 0),
    member(S, Ss),
    (   V = m(X, 1)
    ->  member_claim(M, S, A, X, F), fact(M, F, S, A, m(_, 1), _, VT, _, _, _),
        Left = m(X, 0)
    ;   fact(M, F, S, A, FV, _, VT, _, _, _), Left = m(FV, 0)
    ),
    integer(VT), VT =< Now, T < VT, \+ retracted(M, F, _, _),
    end_dominates(M, P, F, Left, VT, R),
    once(record(M, F, r(_, FV1, _, _, _, _, _))),
    \+ value_held(M, Ss, A, FV1).

% value_held(+M, +Layers, +A, +V): a head the slot shows (claims:view_heads/5) holds the
% value key V
value_held(M, Ss, A, V) :-
    view_heads(M, Ss, A, V, Hs),
    member(H, Hs), fact(M, H, _, _, V1, _, _, _, _, _), V1 == V, !.

% disputes(+Cands, +Heads, +Drops, +CandidateDrops, -Disputes): d(Indexes, HeadIds), the
% kept candidates of a slot (of a set, of one member) whose value none of its heads that
% no record of the context dominates (Drops: -(head, H)-free) holds, with those heads:
% they do not dominate one another (the candidates were kept, the heads are free). One
% entry a slot, however many candidates and heads (a poll's n x n pairs are not listed).
disputes(Cands, Heads, Drops, CDrops, Disputes) :-
    findall(H, member(-(head, H)-free, Drops), Free0),
    (   Free0 == []
    ->  Disputes = []
    ;   set_tree(Free0, Free),
        include(free_head(Free), Heads, FreeHeads),
        maplist(by_group, FreeHeads, HK0), keysort(HK0, HK), group_pairs_by_key(HK, HG),
        kept(Cands, CDrops, Kept),                % both by index, ascending
        maplist(by_group, Kept, CK0), keysort(CK0, CK), group_pairs_by_key(CK, CG),
        merge_groups(CG, HG, Disputes, [])
    ).

free_head(Free, c(-(head, H), _, _)) :- in_set(Free, H).

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
    ;   pairs_values(Hs, HVs0), set_tree(HVs0, HVs),
        findall(I, ( member(I-V, Cs), \+ in_set(HVs, V) ), Is),
        (   Is == []
        ->  D0 = D1
        ;   findall(H, member(-(head, H)-_, Hs), HIds),
            D0 = [d(Is, HIds)|D1]
        ),
        merge_groups(CGs, HGs, D1, D)
    ).

