:- module(chains,
          [ dominates/3,            % +M, +F, +G
            heads_among/3,          % +M, +Ids, -Heads
            undominated_in/3,       % +M, +Ids, +G
            linked_monotone/4,      % +M, +S, +A, -Policy
            linked_heads/5,         % +M, +P, +Live, -Heads, -Front
            insert_linked/6         % +M, +P, +S, +A, +Id, +Now
          ]).
:- use_module(store, [fact/10, sup/3, retracted/4, record/3, mem_policy/2, linked/3,
                      many_attr/2, kept_head/4, front/4, ended_at/4, fact_at/6, begun/2]).
:- use_module(reclaim, [drop_heads/4]).
:- use_module(policies, [policy_dominates/3, monotone/1, frontier/2, newest_first/2,
                          insert_newest/3, confirmation_source/1]).
:- use_module(library(lists), [member/2, append/3]).
:- use_module(library(apply), [include/3]).
:- use_module(library(assoc), [ord_list_to_assoc/2, get_assoc/3]).

/** <module> Dominance between two facts, and chains with explicit links

dominates(M, F, G): F makes G obsolete in memory M. An explicit link F
supersedes G decides it whatever the times; a link G supersedes F excludes
it; otherwise the memory's policy decides (policies:policy_dominates/3). A
chain head is a live fact that no live fact dominates.

A slot with explicit links or a confirmation under a monotone policy (not a set)
keeps the frontier of its live facts and its confirmations (chain_front/2), as a
slot without them keeps its frontier: a fact is dominated when a live fact links to
it, or when a record of that front dominates it by policy and it does not link to
that record (the frontier holds a policy dominator of every fact that has one,
policies:frontier/2, except where the dominator is a confirmation of a higher rank,
which the front holds whatever its time). So a write to a chain of explicit
supersedes links or to a confirmed slot costs what its front and heads cost, where
it scanned the slot (1.5 ms a write at 1,000 facts, 6.4 ms at 4,000), and deriving a
confirmed slot (its first read, a retraction) is n log n, where it compared every
pair of facts (2.3 s at 2,000).
*/

:- det(heads_among/3).
:- det(linked_heads/5).
:- det(insert_linked/6).

%!  dominates(+M, +F, +G) is semidet.
dominates(M, F, G) :-
    (   sup(M, F, G)
    ->  true
    ;   sup(M, G, F)
    ->  fail
    ;   mem_policy(M, P),
        record(M, F, RF),
        record(M, G, RG),
        policy_dominates(P, RF, RG)
    ).

%!  heads_among(+M, +Ids, -Heads) is det.
%
%   The members of Ids that no member of Ids dominates.
heads_among(M, Ids, Heads) :-
    include(undominated_in(M, Ids), Ids, Heads).

%!  undominated_in(+M, +Ids, +G) is semidet.
undominated_in(M, Ids, G) :-
    \+ ( member(F, Ids), F \== G, dominates(M, F, G) ).

%!  linked_monotone(+M, +S, +A, -Policy) is semidet.
%
%   A slot with explicit links or a confirmation (not a set) under a monotone policy:
%   its heads follow from the links and its chain front (chain_front/2).
linked_monotone(M, S, A, P) :-
    linked(M, S, A),
    once(mem_policy(M, P)),
    monotone(P),
    \+ many_attr(M, A).

% chain_front(+RecordsNewestFirst, -Front): the frontier and every confirmation. A
% confirmation dominates every fact of a lower rank whatever the times, so the
% frontier's shortcut does not hold for it as a dominator (it does for every other
% record, and for a confirmation dominated)
chain_front(Sorted, Front) :-
    frontier(Sorted, F0),
    findall(R, ( member(R, Sorted), arg(6, R, Src), confirmation_source(Src),
                 \+ ( member(X, F0), X == R ) ), Cs),
    append(F0, Cs, Front).

%!  linked_heads(+M, +P, +Ids, -Heads, -Front) is det.
%
%   heads_among/3 of such a slot's facts Ids (its live facts, or those known and begun
%   at some time) in n log n rather than n^2, and their chain front: a fact is
%   dominated when a fact of Ids links to it, or when a record of the front dominates
%   it by policy and it does not link to that record; a fact whose every such
%   dominator is one it links to is decided by a scan of Ids (rare).
linked_heads(M, P, Ids, Heads, Front) :-
    findall(R, ( member(Id, Ids), once(record(M, Id, R)) ), Recs),
    newest_first(Recs, Sorted),
    chain_front(Sorted, Front),
    sort(Ids, Sorted0),
    findall(Id-t, member(Id, Sorted0), Pairs),
    ord_list_to_assoc(Pairs, Set),                % membership in log n, not a list's n
    findall(X, ( member(R, Recs), arg(1, R, X),
                 \+ linked_dominated(M, P, Front, R, in(Set),
                                     undominated_in(M, Ids, X)) ), Heads).

% linked_dominated(+M, +P, +Front, +R, +Among, :Undominated): a fact Among (in(Set), or
% live(Now): every live fact begun by the clock Now) dominates the record R: one links to it, or a front record
% other than R dominates it by policy and R does not link to it; when every such record
% is one R links to, Undominated decides
linked_dominated(M, P, Front, R, Among, Undominated) :-
    arg(1, R, X),
    (   sup(M, Y, X), among(Among, M, Y)
    ->  true
    ;   \+ ( member(Fr, Front), arg(1, Fr, Y), Y \== X, policy_dominates(P, Fr, R) )
    ->  fail
    ;   member(Fr, Front), arg(1, Fr, Y), Y \== X, \+ sup(M, X, Y),
        policy_dominates(P, Fr, R)
    ->  true
    ;   \+ call(Undominated)
    ).

among(in(Set), _, Y) :- get_assoc(Y, Set, _).
among(live(Now), M, Y) :-                       % live, and begun by the clock Now
    \+ retracted(M, Y, _, _),
    fact(M, Y, _, _, _, VF, _, _, _, _),
    begun(Now, VF).

%!  insert_linked(+M, +P, +S, +A, +Id, +Now) is det.
%
%   Id was just asserted into the slot S, A, which has explicit links or a confirmation
%   under the monotone policy P and keeps its front (of the facts begun by the clock Now
%   when the slot is timed, else none): the heads Id dominates go, Id is a head unless a
%   live fact begun by then dominates it or it has ended by then, and Id joins the front.
insert_linked(M, P, S, A, Id, Now) :-
    once(record(M, Id, R)),
    once(front(M, S, A, F0)),
    findall(H, ( kept_head(M, S, A, H), dominates(M, Id, H) ), Gone),
    drop_heads(M, S, A, Gone),
    (   (   linked_dominated(M, P, F0, R, live(Now), undominated_slot(M, S, A, Now, Id))
        ;   ended_at(M, none, Now, Id)
        )
    ->  true
    ;   assertz(kept_head(M, S, A, Id))
    ),
    insert_newest(R, F0, Sorted),
    chain_front(Sorted, F1),
    retractall(front(M, S, A, _)),
    assertz(front(M, S, A, F1)).

undominated_slot(M, S, A, Now, X) :-
    \+ ( fact_at(M, S, A, none, Now, G), G \== X, dominates(M, G, X) ).
