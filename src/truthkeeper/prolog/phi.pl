:- module(phi,
          [ phi_filter/3,         % +Policy, +Candidates, -Drops
            phi_store/5,          % +M, +TimedCandidates, +Slots, -Drops, -Disputes
            live_candidates/4,    % +M, +TimedCandidates, -Live, -Ended
            view_verdicts/4,      % +M, +Scope, +Ids, -Verdicts
            not_current/3,        % +M, +Id, -Why
            not_current/4,        % +M, +Id, -Why, +Dominated
            slot_dominated/4,     % +M, +S, +A, -Dominated
            timed_dominated/2,    % +M, -ByTimedSlot
            slot_dominated_in/4,  % +ByTimedSlot, +S, +A, -Dominated
            order_pairs/3,        % +M, +Candidates, -Pairs
            dominance_rule/4,     % +M, +Winner, +Loser, -Rule
            dominators/3,         % +M, +Id, -Ids (live facts that dominate Id)
            dominated/3,          % +M, +Id, -Ids (live facts Id dominates)
            dominance_pairs/3     % +M, +Ids, -Pairs
          ]).
:- use_module(dominance, [dominates/3, ended/3, head/4, fresh/3]).
:- use_module(store, [record/3, mem_policy/2, store_now/2, fact/10, retracted/4, many_attr/2,
                      member_claim/5, kept_head/4, key_layer/2, fact_at/6,
                      sup/3, linked/3, timed/3, live_records/4, front/4]).
:- use_module(library(assoc), [list_to_assoc/2, get_assoc/3, put_assoc/4, empty_assoc/1]).
:- use_module(union, [heads_union/6, member_heads_union/7]).
:- use_module(context, [ended_values/7, disputes/5]).
:- use_module(library(error), [existence_error/2]).
:- use_module(library(apply), [partition/4, include/3, maplist/3, foldl/6]).
:- use_module(policies, [policy_dominates/3, monotone/1, frontier/2, confirmation_source/1,
                          may_dominate/3, front_index/2, front_dominator/4]).
:- use_module(library(pairs), [pairs_values/2, group_pairs_by_key/2]).
:- use_module(library(lists), [member/2, append/3, reverse/2]).


/** <module> The dominance filter over a retrieved context (Phi_T and its policy variants)

Candidates are c(Index, SlotKey, Record) with Record a policy record (see
policies). A candidate is dropped when another candidate of the same slot
dominates it under the policy (policies:policy_dominates/3, the only
definition of dominance); with the temporal policy this is Phi_T.

Cost, for a monotone policy: O(k log k + k * F) for k candidates, F the
frontier size (two distinct values per tier rank plus ties): per slot the
candidates are sorted newest first and each is checked against the frontier
only. A candidate outside the frontier never needs checking as a dominator:
a frontier item of its rank, strictly newer and of a value different from
the dominated one, dominates too (policies:monotone/1). A frontier that ties
make large (n claims at one time) is grouped by time and rank, each group asked
once (policies:front_dominator/4). Other policies are checked pairwise within
each slot.
*/

:- det(phi_filter/3).
:- det(phi_store/5).
:- det(live_candidates/4).
:- det(view_verdicts/4).
:- det(order_pairs/3).
:- det(dominance_rule/4).
:- det(dominators/3).
:- det(dominated/3).
:- det(dominance_pairs/3).

%!  phi_filter(+Policy, +Candidates, -Drops) is det.
%
%   Drops is a list of Index-DominatorIndex pairs, one per dropped index, by
%   index.
phi_filter(Policy, Cands, Drops) :-
    maplist(slot_time_keyed, Cands, Keyed),
    keysort(Keyed, Sorted),                       % by slot, then newest first
    slots(Sorted, Policy, Drops0, []),
    sort(1, @<, Drops0, Drops).

% slot_time_keyed(+Candidate, -Keyed): keyed by slot (of a set, by slot and member: claims
% about two members never dominate one another, and a set's claims are compared pairwise,
% so a set's n claims were n^2 comparisons), then newest first
slot_time_keyed(c(_, K, R), (K1-NT)-R) :-
    arg(3, R, T), NT is -T,
    ( arg(2, R, m(V, _)) -> K1 = K-V ; K1 = K ).

% slots(+Sorted, +Policy, -Drops, ?Tail): the drops of every slot, as a difference list
slots([], _, D, D).
slots([(K-_)-R|Rest], P, D0, D) :-
    take_slot(Rest, K, Rs, Rest1),
    slot_drops(P, [R|Rs], D0, D1),
    slots(Rest1, P, D1, D).

take_slot([(K0-_)-R|Rest], K, [R|Rs], Rest1) :-
    K0 == K, !,
    take_slot(Rest, K, Rs, Rest1).
take_slot(Rest, _, [], Rest).

% slot_drops(+Policy, +RecordsNewestFirst, -Drops, ?Tail): each record with its first
% dominator (newest first) among the slot's frontier (grouped by valid time and rank
% when ties make it large: policies:front_index/2)
slot_drops(_, [_], D0, D) :- !,                   % one record: nothing dominates it
    D0 = D.
slot_drops(P, Rs, D0, D) :-
    (   Rs = [_, _, _, _, _|_],                   % a few records: pairwise is cheaper
        monotone(P),
        \+ ( member(R, Rs), pairwise(R) )
    ->  frontier(Rs, Front),
        front_index(Front, Index0),
        newest_groups(Index0, Index)
    ;   Index = list(Rs)
    ),
    drops(Rs, Index, P, D0, D).

newest_groups(list(Front), list(Front)).
newest_groups(groups(Gs0), groups(Gs)) :- reverse(Gs0, Gs).
newest_groups(confs(Cs, G0), confs(Cs, G)) :- newest_groups(G0, G).

drops([], _, _, D, D).
drops([G|Gs], Index, P, D0, D) :-
    arg(1, G, I),
    (   front_dominator(P, Index, G, F)
    ->  (   I = -(head, _)                       % a head of the store is never dropped
        ->  D0 = D1
        ;   arg(1, F, J),
            D0 = [I-J|D1]
        )
    ;   I = -(head, _)                           % one nothing in the context dominates
    ->  D0 = [I-free|D1]
    ;   D0 = D1
    ),
    drops(Gs, Index, P, D1, D).

% pairwise(+Record): a record the frontier's shortcut does not hold for: a set's member
% (members never conflict) or a confirmation (it dominates by rank, whatever the times).
pairwise(R) :- arg(2, R, m(_, _)), !.
pairwise(R) :- arg(6, R, Src), confirmation_source(Src).

%!  live_candidates(+M, +Timed, -Live, -Ended) is det.
%
%   Timed are ValidTo-c(I, K, R): the candidates whose valid_to has passed at the
%   memory's clock are stale whatever else the context holds (Ended: I-ended); the
%   others are Live.
live_candidates(M, Timed, Live, Ended) :-
    once(store_now(M, Now)),
    partition(ended_by(Now), Timed, EndedT, LiveT),
    pairs_values(LiveT, Live),                    % no findall: nothing is copied
    maplist(ended_drop, EndedT, Ended).

ended_drop(_-c(I, _, _), I-ended).

ended_by(Now, VT-_) :-
    Now \== none, number(VT), VT =< Now.

%!  phi_store(+M, +Timed, +Slots, -Drops, -Disputes) is det.
%
%   Phi_T over the candidates and the memory's heads of their slots (Slots are
%   -(SlotKey, S, A); a scope's view names its two layers under one key, and the
%   view's heads are those of their union): a candidate that a head dominates is
%   dropped with -(head, HeadId). Heads themselves are never dropped. Disputes are
%   d(Indexes, HeadIds): kept candidates of a slot and the heads they disagree with,
%   neither dominating the other (a newer claim of a lower tier than the memory's fact,
%   under the default policy): the memory holds facts the candidates do not make
%   obsolete, and none of them holds the candidates' value.
phi_store(M, Timed, Slots, Drops, Disputes) :-
    once(mem_policy(M, Policy)),
    live_candidates(M, Timed, Cands, Ended),
    maplist(slot_keyed, Slots, Keyed),             % grouped in one sort, not a scan a slot
    keysort(Keyed, Sorted),
    group_pairs_by_key(Sorted, Grouped),
    findall(c(-(head, H), K, R),
            ( member((K-A)-Ss, Grouped),
              store_head(M, Ss, A, K, Cands, H), once(record(M, H, R0)),
              R0 = r(_, V, T, RA, Rank, Src, Meta), R = r(-(head, H), V, T, RA, Rank, Src, Meta) ),
            Heads),
    append(Cands, Heads, All),
    phi_filter(Policy, All, Drops0),
    include(candidate_drop, Drops0, Drops1),
    ended_values(M, Policy, Grouped, Cands, Heads, Drops1, Drops2),
    ( Drops2 == [] -> Drops4 = Drops1 ; append(Drops1, Drops2, D3), sort(1, @<, D3, Drops4) ),
    append(Ended, Drops4, Drops),
    disputes(Cands, Heads, Drops0, Drops4, Disputes).

candidate_drop(I-_) :- integer(I).

slot_keyed(-(K, S, A), (K-A)-S).

% store_head(+M, +Ss, +A, +K, +Cands, -H): a head of the slot (one layer) or of the
% union of a view's layers that may dominate one of its candidates; of a set, only
% those about the members the candidates name
store_head(M, [S], A, K, Cands, H) :-
    !,
    slot_head(M, S, A, K, Cands, H).
store_head(M, Ss, A, K, Cands, H) :-
    once(store_now(M, Now)),
    (   many_attr(M, A)
    ->  named_members(K, Cands, Vs),
        member(V, Vs),
        member_heads_union(M, Ss, A, V, none, Now, Hs)
    ;   heads_union(M, Ss, A, none, Now, Hs)
    ),
    member(H, Hs).

named_members(K, Cands, Vs) :-
    findall(V, ( member(c(_, K2, R), Cands), K2 == K, arg(2, R, m(V, _)) ), Vs0),
    sort(Vs0, Vs).

% slot_head(+M, +S, +A, +K, +Cands, -H): a head of the slot that may dominate one of its
% candidates: of a set, only the heads about the members the candidates name (claims about
% two members never dominate one another; a set of 10,000 members is not read whole).
slot_head(M, S, A, K, Cands, H) :-
    many_attr(M, A),
    !,
    fresh(M, S, A),
    named_members(K, Cands, Vs),
    member(V, Vs),
    member_claim(M, S, A, V, H),
    kept_head(M, S, A, H).
slot_head(M, S, A, _, _, H) :-
    head(M, S, A, H).

% verdict(+M, +Id, -Verdict, +Doms0, -Doms): -(Status, By, Rule) of a fact of the store
% for a filter: head, retracted, ended, future, or dominated by By (a head that dominates
% it when there is one) under Rule (supersedes, or the policy); existence_error(fact, Id)
% for an unknown id. Doms (an assoc S-A -> slot_dominated/4) keeps, across the ids of one
% call, each slot's sweep made for a fact that ended or is still to begin (each decided
% alone scanned its slot for a dominator: a filter of n of them was n^2); such a
% dominated fact's By is the sweep's, the newest fact of the slot's frontier that
% dominates it, when no head does.
verdict(M, Id, V, D0, D) :-
    fact(M, Id, S, A, K, _, _, _, _, _),
    (   retracted(M, Id, _, _)
    ->  V = -(retracted, '', ''), D = D0
    ;   head(M, S, A, Id)
    ->  V = -(head, '', ''), D = D0
    ;   time_status(M, Id, Why)
    ->  slot_dominated_memo(M, S, A, Dom, D0, D),
        (   no_dominator(M, Id, Dom)
        ->  V = -(Why, '', '')
        ;   dominated_verdict(M, S, A, Id, K, Dom, V)
        )
    ;   key_head(K, M, S, A, H), dominates(M, H, Id)
    ->  dominance_rule(M, H, Id, Rule), V = -(dominated, H, Rule), D = D0
    ;   slot_dominated_memo(M, S, A, Dom, D0, D),
        dominated_verdict(M, S, A, Id, K, Dom, V)
    ), !.
verdict(_, Id, _, _, _) :-
    existence_error(fact, Id).

dominated_verdict(M, S, A, Id, K, Dom, -(dominated, By, Rule)) :-
    (   key_head(K, M, S, A, H), dominates(M, H, Id)
    ->  By = H
    ;   Dom \== none, get_assoc(Id, Dom, By0)
    ->  By = By0
    ;   kept_front_dominator(M, S, A, Id, By0)
    ->  By = By0
    ;   first_dominator(M, Id, By)
    ),
    dominance_rule(M, By, Id, Rule).

% kept_front_dominator(+M, +S, +A, +Id, -By): a live fact that links to Id, or a record of
% the front the slot keeps (its frontier; of a slot with links or a confirmation, that and
% its confirmations) that dominates Id and that Id does not link to. The front holds such
% a dominator for nearly every fact that has one (chains:linked_dominated/6), so a verdict
% costs the front's size where it scanned the slot (n^2 over a filter of a slot's n facts);
% where it holds none, first_dominator/3 scans.
kept_front_dominator(M, S, A, Id, By) :-
    (   sup(M, By, Id), \+ retracted(M, By, _, _)
    ->  true
    ;   front(M, S, A, Front),
        once(mem_policy(M, P)),
        once(record(M, Id, R)),
        member(Fr, Front), arg(1, Fr, By), By \== Id,
        \+ sup(M, Id, By), \+ retracted(M, By, _, _),
        policy_dominates(P, Fr, R)
    ),
    !.

% slot_dominated_memo(+M, +S, +A, -Dominated, +Doms0, -Doms): the slot's sweep for the
% verdicts of one call: slot_dominated/4 for a slot with a fact that ends or begins later;
% for another slot where no head dominates a fact (its value is a head's: a status that
% returns to an earlier value), the same sweep where it is n log n (a monotone policy, no
% set, no link or confirmation), so that the verdicts on n such facts are not n scans of
% the slot (first_dominator/3) but one sweep; none otherwise.
slot_dominated_memo(M, S, A, Dom, D0, D) :-
    (   get_assoc(S-A, D0, Dom0)
    ->  Dom = Dom0, D = D0
    ;   (   timed(M, S, A)
        ->  slot_dominated(M, S, A, Dom)
        ;   \+ linked(M, S, A), \+ many_attr(M, A), once(mem_policy(M, P)), monotone(P)
        ->  slot_sweep(M, P, S, A, Dom)
        ;   Dom = none
        ),
        put_assoc(S-A, D0, Dom, D)
    ).

%!  view_verdicts(+M, +Scope, +Ids, -Verdicts) is det.
%
%   Each id's verdict in Scope's view ('': the unscoped memory) as -(S, A, Status, By,
%   Rule), its slot with it; the slots' sweeps (verdict/5) made once for all of them.
%   A head of its own layer that a fact of the view's other layer dominates is no head of
%   the view: it is dominated by that fact (a head of the view when one dominates it;
%   under a monotone policy a fact of the same value may stand between them, so it need
%   not be a head). So is a fact still to begin that a live fact of the other layer
%   dominates.
%   @error existence_error(fact, Id) for an id the memory does not hold.
view_verdicts(M, Sc, Ids, Vs) :-
    empty_assoc(D0),
    foldl(id_verdict(M, Sc), Ids, Vs, D0, _).

id_verdict(M, Sc, Id, -(S, A, Status, By, Rule), D0, D) :-
    view_verdict(M, Sc, Id, -(Status, By, Rule), D0, D),
    fact(M, Id, S, A, _, _, _, _, _, _), !.

% view_verdict(+M, +Scope, +Id, -Verdict, +Doms0, -Doms): one id's, Doms as verdict/5's
view_verdict(M, '', Id, V, D0, D) :- !,
    verdict(M, Id, V, D0, D).
view_verdict(M, Sc, Id, V, D0, D) :-
    verdict(M, Id, V0, D0, D1),
    V0 = -(Status, _, _),
    (   fact(M, Id, S, A, _, _, _, _, _, _),
        view_layers(Sc, S, Ss)
    ->  view_dominator(M, Status, Ss, S, A, Id, By, D1, D)
    ;   By = none, D = D1
    ),
    (   By == none
    ->  V = V0
    ;   dominance_rule(M, By, Id, Rule),
        V = -(dominated, By, Rule)
    ).

% view_dominator(+M, +Status, +Layers, +S, +A, +Id, -By, +Doms0, -Doms): the fact of the
% view's other layer (or a head of the view) that dominates Id, or none; the union's
% heads are derived once a call (kept in Doms under u(S, A), an assoc of them, whether
% or not Id is one of them: a poll's every claim is, and each derived them again, n^2
% for each), and the other layer's front is asked before its facts are scanned (each
% head of many was n^2)
view_dominator(M, head, Ss, S, A, Id, By, D0, D) :- !,
    once(store_now(M, Now)),
    (   get_assoc(u(Ss, A), D0, Hs-Set)
    ->  D = D0
    ;   heads_union(M, Ss, A, none, Now, Hs0),
        findall(H-t, member(H, Hs0), Pairs),
        list_to_assoc(Pairs, Set),
        strongest_first(M, Hs0, Hs),
        put_assoc(u(Ss, A), D0, Hs-Set, D)
    ),
    (   \+ get_assoc(Id, Set, _),
        once(fact(M, Id, _, _, K, _, _, _, _, _)),
        (   union_head(K, M, Ss, A, Hs, Set, By0), dominates(M, By0, Id)
        ;   other_layer_dominator(M, Ss, S, A, Now, Id, By0)
        )
    ->  By = By0
    ;   By = none
    ).
view_dominator(M, future, Ss, S, A, Id, By, D, D) :- !,
    ( other_layer_dominator(M, Ss, S, A, none, Id, By0) -> By = By0 ; By = none ).
view_dominator(_, _, _, _, _, _, none, D, D).

% strongest_first(+M, +Heads, -Sorted): confirmations first, then by tier rank and valid
% time, newest first: the head that dominates a fact is asked first (a poll confirmed in a
% view: each claim was checked against the poll's hundreds of tied heads before the
% confirmation, n^2)
strongest_first(M, Hs, Sorted) :-
    findall(C-Rank-T-H, ( member(H, Hs), once(record(M, H, R)),
                          arg(3, R, T), arg(5, R, Rank), arg(6, R, Src),
                          ( confirmation_source(Src) -> C = 1 ; C = 0 ) ), Keyed),
    sort(0, @>=, Keyed, Desc),
    findall(H, member(_-_-_-H, Desc), Sorted).

% union_head(+Key, +M, +Layers, +A, +Heads, +HeadSet, -H): the union's heads that may
% dominate a fact of Key: of a set, the heads among the claims about its member in either
% layer (claims about two members never dominate one another: a set's every head was
% asked for each claim judged, n^2 in the claims about a member)
union_head(m(V, _), M, Ss, A, _, Set, H) :- !,
    member(S, Ss), member_claim(M, S, A, V, H), get_assoc(H, Set, _).
union_head(_, _, _, _, Hs, _, H) :-
    member(H, Hs).

% key_head(+Key, +M, +S, +A, -H): the slot's heads that may dominate a fact of Key (of
% a set, among the claims about its member only; slot_head/6 does so for candidates)
key_head(m(V, _), M, S, A, H) :- !,
    member_claim(M, S, A, V, H), head(M, S, A, H).
key_head(_, M, S, A, H) :-
    head(M, S, A, H).

other_layer_dominator(M, Ss, S, A, Now, Id, By) :-
    member(S2, Ss), S2 \== S,
    once(fact(M, Id, _, _, K, _, _, _, _, _)),
    (   kept_front_dominator(M, S2, A, Id, By), fact_at(M, S2, A, none, Now, By)
    ;   slot_fact(K, M, S2, A, By), fact_at(M, S2, A, none, Now, By), dominates(M, By, Id)
    ),
    !.

% view_layers(+Scope, +SubjectKey, -Keys): the scope's key and the shared one of a subject
view_layers(Sc, S, [Own, Shared]) :-
    key_layer(S, L),
    (   L == ''
    ->  Shared = S
    ;   atomic_list_concat([_, Shared], '\x1F\', S)
    ),
    atomic_list_concat([Sc, Shared], '\x1F\', Own).

%!  dominance_rule(+M, +Winner, +Loser, -Rule) is det.
%
%   Why Winner dominates Loser: supersedes (an explicit link), or the memory's policy.
dominance_rule(M, W, L, Rule) :-
    (   sup(M, W, L)
    ->  Rule = supersedes
    ;   once(mem_policy(M, Rule))
    ).

%!  not_current(+M, +Id, -Why) is semidet.
%
%   A live fact that is no head for want of time, not of a
%   dominator: ended (its valid_to has passed) or future (its valid_from has not come).
not_current(M, Id, Why) :-
    not_current(M, Id, Why, none).

%!  not_current(+M, +Id, -Why, +Dominated) is semidet.
%
%   not_current/3 where Dominated (slot_dominated/4 of Id's slot, or none) says whether a
%   live fact dominates Id.
not_current(M, Id, Why, Dominated) :-
    time_status(M, Id, Why),
    no_dominator(M, Id, Dominated).

% time_status(+M, +Id, -Why): the fact has ended, or is still to begin, at the clock
time_status(M, Id, Why) :-
    once(store_now(M, Now)),
    Now \== none,
    fact(M, Id, _, _, _, VF, _, _, _, _),
    (   ended(M, Id, Now)
    ->  Why = ended
    ;   VF > Now
    ->  Why = future
    ).

% no_dominator(+M, +Id, +Dominated): no live fact dominates Id (Dominated: its slot's
% slot_dominated/4, or none to look)
no_dominator(M, Id, Dominated) :-
    (   Dominated == none
    ->  fact(M, Id, S, A, _, _, _, _, _, _),
        \+ kept_front_dominator(M, S, A, Id, _),   % found in the front without a scan
        \+ first_dominator(M, Id, _)
    ;   \+ get_assoc(Id, Dominated, _)
    ).

% first_dominator(+M, +Id, -By): the first live fact of Id's slot, in recording order,
% that dominates it (dominators/3's first, without looking further)
first_dominator(M, Id, By) :-
    fact(M, Id, S, A, K, _, _, _, _, _),
    slot_fact(K, M, S, A, By),
    By \== Id,
    \+ retracted(M, By, _, _),
    dominates(M, By, Id),
    !.

% slot_fact(+Key, +M, +S, +A, -Id): the facts of the slot that may dominate a fact of Key:
% of a set, the claims about its member only (claims about two members never dominate
% one another)
slot_fact(m(V, _), M, S, A, Id) :- !,
    member_claim(M, S, A, V, Id).
slot_fact(_, M, S, A, Id) :-
    fact(M, Id, S, A, _, _, _, _, _, _).

%!  slot_dominated(+M, +S, +A, -Dominated) is det.
%
%   The live facts of a slot that a live fact of it dominates (those with dominators/3),
%   as an assoc, from one sweep of its records (phi_filter/3: n log n for a monotone
%   policy), for the statuses of a slot's facts that ended or are still to begin: each
%   decided alone scans the slot (n^2 over a history of 4,000 such facts: 22 s). none
%   where that is not needed (a slot with no such fact) or not so (explicit links or a
%   confirmation: linked/3).
slot_dominated(M, S, A, Dominated) :-
    (   timed(M, S, A), \+ linked(M, S, A)
    ->  once(mem_policy(M, P)),
        slot_sweep(M, P, S, A, Dominated)
    ;   Dominated = none
    ).

slot_sweep(M, P, S, A, Dominated) :-
    live_records(M, S, A, Recs),
    findall(c(Id, s, R), ( member(R, Recs), arg(1, R, Id) ), Cands),
    phi_filter(P, Cands, Drops),
    list_to_assoc(Drops, Dominated).

%!  timed_dominated(+M, -ByTimedSlot) is det.
%
%   slot_dominated/4 of every slot with a fact that ends or begins later, by S-A (an
%   assoc): for the statuses of every fact of the memory.
timed_dominated(M, BySlot) :-
    findall(S-A, timed(M, S, A), Slots0),
    sort(Slots0, Slots),
    findall((S-A)-D, ( member(S-A, Slots), slot_dominated(M, S, A, D) ), Pairs),
    list_to_assoc(Pairs, BySlot).

%!  slot_dominated_in(+ByTimedSlot, +S, +A, -Dominated) is det.
slot_dominated_in(BySlot, S, A, D) :-
    ( get_assoc(S-A, BySlot, D0) -> D = D0 ; D = none ).

%!  order_pairs(+M, +Candidates, -Pairs) is det.
%
%   The (dominated, dominator) index pairs among candidates c(Index, SlotKey,
%   Record) of one slot that the policy's order allows (ignoring values), each
%   dominated index with its possible dominators newest first: the only pairs a
%   kappa needs to judge.
order_pairs(M, Cands, Pairs) :-
    once(mem_policy(M, P)),
    findall(K-C, ( member(C, Cands), C = c(_, K, _) ), BySlot0),
    keysort(BySlot0, BySlot),           % a slot's candidates only against each other (all
    group_pairs_by_key(BySlot, Slots),  % against all: 8,000 candidates, 36 s)
    findall(I-Js, ( member(_-Cs, Slots), member(c(I, _, RI), Cs),
                    findall(NT-J, ( member(c(J, _, RJ), Cs), J \== I,
                                    may_dominate(P, RJ, RI),
                                    arg(3, RJ, T), NT is -T ), Keyed),
                    Keyed \== [],
                    keysort(Keyed, Sorted), pairs_values(Sorted, Js) ), Pairs0),
    keysort(Pairs0, Pairs).             % in the candidates' order

%!  dominators(+M, +Id, -Ids) is det.
%
%   The live facts of Id's slot that dominate Id.
dominators(M, Id, Ids) :-
    slot_related(M, Id, over, Ids).

%!  dominated(+M, +Id, -Ids) is det.
%
%   The live facts of Id's slot that Id dominates.
dominated(M, Id, Ids) :-
    slot_related(M, Id, under, Ids).

slot_related(M, Id, Dir, Ids) :-
    (   fact(M, Id, S, A, _, _, _, _, _, _)
    ->  findall(F, ( fact(M, F, S, A, _, _, _, _, _, _), F \== Id,
                     \+ retracted(M, F, _, _), related(Dir, M, F, Id) ), Ids)
    ;   existence_error(fact, Id)
    ).

related(over, M, F, Id) :- dominates(M, F, Id).
related(under, M, F, Id) :- dominates(M, Id, F).

%!  dominance_pairs(+M, +Ids, -Pairs) is det.
%
%   The F-G pairs among the live facts Ids where F dominates G (a scope's view
%   draws the supersessions across its two layers).
dominance_pairs(M, Ids, Pairs) :-
    findall(F-G, ( member(F, Ids), member(G, Ids), F \== G,
                   \+ retracted(M, F, _, _), \+ retracted(M, G, _, _),
                   dominates(M, F, G) ), Pairs).
