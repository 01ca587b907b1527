:- module(links,
          [ check_link_ends/3,      % +M, +F, +G
            no_cycle/2              % +M, +Recs
          ]).
:- use_module(store, [fact/10, sup/3, tier_rank/3, key_layer/2]).
:- use_module(library(lists), [member/2]).
:- use_module(library(apply), [foldl/4]).
:- use_module(library(assoc), [empty_assoc/1, put_assoc/4, get_assoc/3]).
:- use_module(library(yall)).
:- use_module(library(error), [existence_error/2, permission_error/3]).

/** <module> Explicit supersedes links: what a batch may link

A fact may supersede one fact of its own slot whose tier is not above its own,
and the links never close a loop. dominance:add_facts/2 asks these checks of
every batch before anything is derived from it.
*/

:- det(check_link_ends/3).
:- det(no_cycle/2).

%!  check_link_ends(+M, +F, +G) is det.
%
%   The link's two facts exist, share a slot, and F's tier is not below G's (a
%   link one of whose ends was erased was checked when it was made). G must be
%   visible from F's layer (F's scope or the shared layer): another scope's fact
%   is no fact there, as one that does not exist.
check_link_ends(M, F, G) :-
    (   \+ fact(M, G, _, _, _, _, _, _, _, _)
    ->  existence_error(fact, G)
    ;   true
    ),
    once(fact(M, F, S, A, _, _, _, _, TF, _)),
    once(fact(M, G, S2, A2, _, _, _, _, TG, _)),
    (   key_layer(S, LF), key_layer(S2, LG), LG \== '', LG \== LF
    ->  existence_error(fact, G)        % an erased one too: its placeholder keeps its layer
    ;   ( A == '$erased' ; A2 == '$erased' )
    ->  true                % an end was erased (it moved to its placeholder's slot)
    ;   S-A \== S2-A2
    ->  permission_error(supersede, other_slot, F-G)
    ;   tier_rank(M, TF, RF), tier_rank(M, TG, RG), RF < RG
    ->  permission_error(supersede, higher_tier, F-G)
    ;   true
    ).

%!  no_cycle(+M, +Recs) is det.
%
%   The explicit links of a batch close no loop. A fact supersedes at most one
%   fact and the stored links are acyclic, so a loop runs through new facts only:
%   each new fact's links are walked once, across new facts (an old one ends it).
no_cycle(M, Recs) :-
    (   member(f(_, _, _, _, _, _, _, _, _, Sup, _, _, _), Recs), Sup \== @(none)
    ->  findall(Id-new, member(f(Id, _, _, _, _, _, _, _, _, _, _, _, _), Recs), Pairs),
        list_to_assoc_last(Pairs, A0),
        foldl(walk_links(M), Pairs, A0, _)
    ;   true                            % no links in the batch: no loop
    ).

list_to_assoc_last(Pairs, A) :-
    empty_assoc(E),
    foldl([K-V, A1, A2]>>put_assoc(K, A1, V, A2), Pairs, E, A).

walk_links(M, X-_, A0, A) :-
    (   get_assoc(X, A0, State)
    ->  (   State == done
        ->  A = A0
        ;   State == path
        ->  once(sup(M, X, Z)),
            permission_error(supersede, cycle, X-Z)
        ;   sup(M, X, Z)
        ->  put_assoc(X, A0, path, A1),
            walk_links(M, Z-x, A1, A2),
            put_assoc(X, A2, done, A)
        ;   put_assoc(X, A0, done, A)
        )
    ;   A = A0                          % an old fact: its links never reach a new one
    ).
