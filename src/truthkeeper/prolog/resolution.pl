:- module(resolution,
          [ resolution/4            % +M, +Heads, -Status, -Groups
          ]).
:- use_module(store, [fact/10]).
:- use_module(library(lists), [member/2]).
:- use_module(library(pairs), [pairs_values/2]).

/** <module> How a slot's heads resolve

A slot is unknown (no heads), resolved (its heads agree on one value, or a set's
members agree on their presence) or in conflict; its heads are grouped by value
key, newest first. dominance decides the heads; this module only reads them.
*/

:- det(resolution/4).

%!  resolution(+M, +Heads, -Status, -Groups) is det.
%
%   Status is unknown (no heads), resolved (one value) or conflict; Groups are
%   the heads grouped by value key, newest first (valid time, then recording),
%   each group a list of ids, the group of the newest head first. Heads of a set
%   (keys m(Member, Presence)) are grouped by key in the standard order of keys;
%   the set is in conflict when a member's chain has heads of both presences.
resolution(M, Heads, Status, Groups) :-
    member(H0, Heads), fact(M, H0, _, _, m(_, _), _, _, _, _, _),
    !,
    findall(K-(NVF-NRA-H), ( member(H, Heads), fact(M, H, _, _, K, VF, _, RA, _, _),
                             NVF is -VF, NRA is -RA ), Keyed),
    msort(Keyed, Sorted0),                      % by key, then newest first within a key
    findall(K-H, member(K-(_-_-H), Sorted0), Sorted),
    adjacent_groups(Sorted, Keys, Groups),      % linear: the keys are sorted
    (   contested(Keys)
    ->  Status = conflict
    ;   Status = resolved
    ).
resolution(M, Heads, Status, Groups) :-
    findall(NK-(K-H), ( member(H, Heads),
                        fact(M, H, _, _, K, VF, _, RA, _, _),
                        NVF is -VF, NRA is -RA, NK = NVF-NRA ), Keyed),
    keysort(Keyed, Sorted),
    pairs_values(Sorted, KHs),
    group_keys(KHs, Groups),
    length(Groups, N),
    (   N =:= 0 -> Status = unknown
    ;   N =:= 1 -> Status = resolved
    ;   Status = conflict
    ).

% adjacent_groups(+KeySortedPairs, -Keys, -Groups): the ids of each run of one key, and the
% keys in order
adjacent_groups([], [], []).
adjacent_groups([K-H|T], [K|Ks], [[H|Hs]|Gs]) :-
    same_key(T, K, Hs, Rest),
    adjacent_groups(Rest, Ks, Gs).

same_key([K2-H|T], K, [H|Hs], Rest) :-
    K2 == K, !,
    same_key(T, K, Hs, Rest).
same_key(Rest, _, [], Rest).

% contested(+SortedKeys): a member has heads of both presences (m(V, 0) sorts just before
% m(V, 1))
contested([m(V, 0), m(W, 1)|_]) :- V == W, !.
contested([_|Ks]) :- contested(Ks).

% group_keys(+KeyIdPairs, -Groups): the ids of each key, in order, the groups in the order
% of their keys' first ids (sorted by key with each id's position: n log n, where taking
% each key's ids from the rest was n^2 over n heads of n values)
group_keys(KHs, Groups) :-
    numbered(KHs, 0, Numbered),
    keysort(Numbered, ByKey),                   % stable: a key's ids stay in order
    key_runs(ByKey, Runs),
    keysort(Runs, Ordered),
    pairs_values(Ordered, Groups).

numbered([], _, []).
numbered([K-H|T], I, [K-(I-H)|T1]) :-
    I1 is I + 1,
    numbered(T, I1, T1).

key_runs([], []).
key_runs([K-(I-H)|T], [I-[H|Hs]|Rs]) :-
    run_ids(T, K, Hs, Rest),
    key_runs(Rest, Rs).

run_ids([K2-(_-H)|T], K, [H|Hs], Rest) :-
    K2 == K, !,
    run_ids(T, K, Hs, Rest).
run_ids(Rest, _, [], Rest).
