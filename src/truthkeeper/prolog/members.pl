:- module(members,
          [ member_heads/4,         % +M, +A, +Ids, -Heads
            update_set/4,           % +M, +S, +A, +Ids
            update_member/4,        % +M, +S, +A, +Member
            update_members/4,       % +M, +S, +A, +Members
            member_linked/4,        % +M, +S, +A, +Member
            members_holds/4         % +SortedKeys, -Values, +Contested0, -Contested
          ]).
:- use_module(store, [fact/10, sup/3, retracted/4, record/3, mem_policy/2, many_attr/2,
                      member_claim/5, kept_head/4, holds/4, kept_conflict/3, timed/3,
                      store_now/2, stale/3, touch/1, ended_at/4, begun/2]).
:- use_module(policies, [policy_dominates/3, monotone/1, heads_by_frontier/4,
                          confirmation_source/1]).
:- use_module(library(lists), [member/2, append/3, same_length/2]).
:- use_module(library(apply), [exclude/3]).

/** <module> A set's members, each apart from the others

In a set-valued attribute (declared many) a claim's key is m(Member, Presence).
Claims about two members never dominate one another (policies:other_members/2)
unless one links to the other, so without links the heads of a set are those of
each member's claims taken apart, and a write about one member changes only that
member's heads, whether the set holds it, and whether the set is contested. This
keeps a set's first read, an added member and a retraction linear in the set's
size or better, where the pairwise definition (dominance:heads_among/3) is
quadratic: a set of 3,000 members took 8 s to read first, and 7 s to retract a
member.

store:member_claim/5 finds a member's facts without a scan of the set. A timed set
(a member's fact ends, or begins later) is decided member by member too, at the
memory's clock: a write, a retraction or the clock passing a member's time
(store:due/6 names the member) re-derives that member alone.
*/

:- det(update_member/4).
:- det(members_holds/4).

%!  member_heads(+M, +A, +Ids, -Heads) is semidet.
%
%   The heads among the live facts Ids of a set of attribute A, member by member;
%   fails when A is no set, a fact of Ids links to another, or a fact names no member
%   (then the caller decides pairwise).
member_heads(M, A, Ids, Heads) :-
    many_attr(M, A),
    \+ ( member(Id, Ids), sup(M, Id, _) ),
    findall(V-R, ( member(Id, Ids), once(record(M, Id, R)), arg(2, R, m(V, _)) ), Keyed0),
    same_length(Keyed0, Ids),                     % every claim names a member
    keysort(Keyed0, Keyed),
    once(mem_policy(M, P)),
    member_groups(Keyed, P, Heads, []).

% member_groups(+MemberKeyedRecords, +P, -Heads, ?Tail): each member's heads, by its
% frontier under a monotone policy (no confirmation among its claims), else pairwise
member_groups([], _, H, H).
member_groups([V-R|T], P, H0, H) :-
    same_member(T, V, Rs, Rest),
    (   Rs == []
    ->  arg(1, R, Id), H0 = [Id|H1]               % one claim: its member's head
    ;   monotone(P), \+ ( member(X, [R|Rs]), arg(6, X, Src), confirmation_source(Src) )
    ->  heads_by_frontier(P, [R|Rs], Hs, _), append(Hs, H1, H0)
    ;   pairwise_heads(P, [R|Rs], Hs), append(Hs, H1, H0)
    ),
    member_groups(Rest, P, H1, H).

same_member([V0-R|T], V, [R|Rs], Rest) :-
    V0 == V, !,
    same_member(T, V, Rs, Rest).
same_member(Rest, _, [], Rest).

% pairwise_heads(+P, +Records, -HeadIds): the records no other one dominates (no link
% among them: the policy decides each pair)
pairwise_heads(P, Rs, Heads) :-
    findall(I, ( member(R, Rs), arg(1, R, I),
                 \+ ( member(F, Rs), arg(1, F, J), J \== I, policy_dominates(P, F, R) ) ),
            Heads).

%!  update_set(+M, +S, +A, +Ids) is semidet.
%
%   The facts Ids were just added to the set S, A (read before): each member they are
%   about updated apart (update_member/4). Fails, changing nothing, when A is no set, a
%   fact names no member, or a fact about one of those members links or is linked.
update_set(M, S, A, Ids) :-
    many_attr(M, A),
    findall(V, ( member(Id, Ids), fact(M, Id, _, _, m(V, _), _, _, _, _, _) ), Vs0),
    same_length(Vs0, Ids),
    sort(Vs0, Vs),
    \+ ( member(V, Vs), member_linked(M, S, A, V) ),
    forall(member(V, Vs), update_member(M, S, A, V)).

%!  update_members(+M, +S, +A, +Members) is semidet.
%
%   The members Members of the set S, A (derived already: not stale) changed by the
%   clock or an end: each updated apart (update_member/4), the memory touched. Fails,
%   changing nothing, when A is no set, the slot is stale, or one of them links or is
%   linked.
update_members(M, S, A, Vs) :-
    many_attr(M, A),
    \+ stale(M, S, A),
    \+ ( member(V, Vs), member_linked(M, S, A, V) ),
    touch(M),
    forall(member(V, Vs), update_member(M, S, A, V)).

%!  member_linked(+M, +S, +A, +V) is semidet.
%
%   A fact about the member V of the set S, A links to another or is linked.
member_linked(M, S, A, V) :-
    member_claim(M, S, A, V, Id),
    ( sup(M, Id, _) ; sup(M, _, Id) ),
    !.

%!  update_member(+M, +S, +A, +V) is det.
%
%   The heads of the member V of the set S, A from its live facts (none of which links
%   or is linked: member_linked/4), then whether the set holds V and whether the set
%   is contested. Of a timed set, at the memory's clock (as dominance:heads_at/6): among
%   the facts begun by then, those no other dominates, less those ended by then.
update_member(M, S, A, V) :-
    ( timed(M, S, A) -> once(store_now(M, Now)) ; Now = none ),
    findall(Id, member_claim(M, S, A, V, Id), All),
    findall(V-R, ( member(Id, All), \+ retracted(M, Id, _, _),
                   fact(M, Id, _, _, _, VF, _, _, _, _), begun(Now, VF),
                   once(record(M, Id, R)) ),
            Keyed),
    once(mem_policy(M, P)),
    member_groups(Keyed, P, Heads0, []),
    exclude(ended_at(M, none, Now), Heads0, Heads),
    forall(member(X, All), retractall(kept_head(M, S, A, X))),
    forall(member(H, Heads), assertz(kept_head(M, S, A, H))),
    findall(K, ( member(H, Heads), fact(M, H, _, _, K, _, _, _, _, _) ), Ks0),
    sort(Ks0, Ks),
    members_holds(Ks, In, false, Contested),
    (   In == [V]
    ->  ( holds(M, S, A, V) -> true ; assertz(holds(M, S, A, V)) )
    ;   ( retract(holds(M, S, A, V)) -> true ; true )
    ),
    (   Contested == true
    ->  ( kept_conflict(M, S, A) -> true ; assertz(kept_conflict(M, S, A)) )
    ;   kept_conflict(M, S, A)                    % was it this member's? the set's heads say
    ->  findall(K, ( kept_head(M, S, A, H), fact(M, H, _, _, K, _, _, _, _, _) ), SKs0),
        sort(SKs0, SKs),
        members_holds(SKs, _, false, Still),
        ( Still == true -> true ; retractall(kept_conflict(M, S, A)) )
    ;   true
    ).

%!  members_holds(+SortedKeys, -Values, +Contested0, -Contested) is det.
%
%   The members a set holds, in one pass over its heads' sorted keys (m(V, 0) sorts just
%   before m(V, 1)): a member is in when a head says so and none says it left; the set
%   is contested when heads say both of a member.
members_holds([], [], C, C).
members_holds([m(V, 0), m(W, 1)|Ks], Values, _, C) :-
    V == W, !,
    members_holds(Ks, Values, true, C).
members_holds([m(V, 1)|Ks], [V|Values], C0, C) :- !,
    members_holds(Ks, Values, C0, C).
members_holds([_|Ks], Values, C0, C) :-
    members_holds(Ks, Values, C0, C).
