:- module(forget,
          [ forget/1,            % +M (after erasures)
            erase_retract/3      % +M, +Id, +RA
          ]).
:- use_module(tms, [forget_tables/1]).
:- use_module(store, [fact/10, stale/3, touch/1]).
:- use_module(dominance, [retract_fact/4]).
:- use_module(library(lists), [member/2]).
:- use_module(library(apply), [maplist/2]).

/** <module> After an erasure, nothing of the erased data stays in SWI-Prolog

An erased value or subject can stay in the process after its clauses are
retracted: in memory M's belief tables (their answers), in retracted clauses
not yet reclaimed, and in the atom table until an atom collection finds nothing
that refers to it. Atom collection also keeps (SWI-Prolog 9.2, pl-gc.c):

  - the atom each thread unregistered last (PL_unregister_atom() guards a race
    with it): the `gc` thread's, when it reclaimed the erased clauses in the
    background, or this thread's, when the collection below did;
  - any atom in the dead region of a thread's local stack up to LOCAL_MARGIN
    words (about 66 KB) past its top, scanned conservatively: a deeper earlier
    call (reading a slot in from the journal, say) leaves atoms there until a
    call as deep overwrites them.

  - any atom in a term on the global stack that nothing uses any more but no
    stack collection has reclaimed yet (the terms of a process's first queries,
    say: an erased subject stayed there in the first memory of a process).

Clause collection also leaves an erased clause in place, with its atoms, when
its predicate is not dirty at the collection that could reclaim it (its
reference lingering from an earlier pass): an erased subject stayed whenever
another memory had been closed while this one read its slots (closing retracts
that memory's clauses of the same predicates; measured: every time). Each pass
therefore first asserts and retracts one clause of every predicate that holds a
memory's data, so that each is dirty and collected.

forget/1 stops the `gc` thread (SWI-Prolog starts it again at the next
collection it needs), reclaims the clauses, makes a fresh atom the last one
this thread unregisters, collects the stacks, overwrites the dead region, and
then collects the atoms; twice: after one pass, a lazily opened memory that had
confirmed a value still held the value's atom (measured: held after every one
of six runs with one pass, after none with two; a pass costs about 2 ms).
*/

:- dynamic last_unregistered/1.

:- det(forget/1).

%!  forget(+M) is det.
%
%   M's belief tables go (derived again when next asked), then the clauses and
%   atoms nothing holds, so that an erased value leaves the process now, not at
%   SWI-Prolog's next collection (or never, held by a dead stack word).
forget(M) :-
    forget_tables(M),
    set_prolog_gc_thread(stop),
    collect,
    collect.

collect :-
    garbage_collect_clauses,
    atom_concat(tk_, forgotten, A),         % made here: no clause holds it
    forall(data_predicate(P), dirty(P, A)),
    assertz(last_unregistered(A)),
    retract(last_unregistered(A)),
    garbage_collect_clauses,                % unregisters A, after the erased atoms
    garbage_collect,                        % the stacks' garbage, which atom collection
    overwrite_stack(2000),                  % scans as if live (a first memory's reads)
    garbage_collect_atoms.

% data_predicate(-M:Head): each dynamic predicate that holds a memory's data.
data_predicate(M:H) :-
    member(M, [store, tms]),
    current_predicate(M:N/Ar),
    \+ sub_atom(N, 0, _, _, $),             % not a tabling wrapper
    functor(H, N, Ar),
    predicate_property(M:H, dynamic),
    \+ predicate_property(M:H, imported_from(_)).

% dirty(+M:Head, +A): assert and retract a clause of Head whose every argument is A
% (no memory's handle: no table depends on it), so the predicate is dirty; first in
% the clause list, where the collection that walks it to the erased clauses finds it.
dirty(M:H, A) :-
    H =.. [_|Args],
    maplist(=(A), Args),
    asserta(M:H),
    retract(M:H).

% overwrite_stack(+N): N nested frames holding integers only, above the caller's
% top of the local stack (not a last call, so each frame stays: about 190 KB).
overwrite_stack(0) :- !.
overwrite_stack(N) :-
    N1 is N - 1,
    overwrite_stack(N1),
    N1 < N.

%!  erase_retract(+M, +Id, +RA) is det.
%
%   Retract Id (reason erased) for its erasure, its slot made stale first: derived
%   again when next read, so erasing a slot's n facts costs n retractions, not n
%   derivations of the slot (a subject whose slot held 4,000 claims tied in time took
%   77 s to erase).
erase_retract(M, Id, RA) :-
    once(fact(M, Id, S, A, _, _, _, _, _, _)),
    (   stale(M, S, A)
    ->  true
    ;   touch(M),
        assertz(stale(M, S, A))
    ),
    retract_fact(M, Id, RA, erased).
