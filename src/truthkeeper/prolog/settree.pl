:- module(settree,
          [ set_tree/2,           % +Keys, -Set
            in_set/2,             % +Set, +Key
            not_in/3              % +Xs, +Ys, -Zs
          ]).
:- use_module(library(apply), [maplist/3, exclude/3]).
:- use_module(library(assoc), [ord_list_to_assoc/2, get_assoc/3]).

/** <module> Sets looked up in a balanced tree

ord_memberchk/2, memberchk/2 and subtract/3 walk a list for each key they look for: one
collection searched for each item of another is n x n (a filter of 16,000 candidates took
11 s, a what_if over 89,700 beliefs 400 s). A call whose width grows with its input looks
its keys up here. Keys compare by standard order, as ==/2 compares ground terms.
*/

:- det(set_tree/2).
:- det(not_in/3).

%!  set_tree(+Keys, -Set) is det.
%
%   Keys as a set for in_set/2 (an AVL tree: library(assoc)).
set_tree(Keys, Set) :-
    sort(Keys, Sorted),
    maplist(key_true, Sorted, Pairs),
    ord_list_to_assoc(Pairs, Set).

key_true(K, K-t).

%!  in_set(+Set, +Key) is semidet.
in_set(Set, K) :- get_assoc(K, Set, _).

%!  not_in(+Xs, +Ys, -Zs) is det.
%
%   The members of Xs not in Ys, in Xs's order.
not_in(Xs, Ys, Zs) :-
    set_tree(Ys, Set),
    exclude(in_set(Set), Xs, Zs).
