:- use_module('../store').
:- use_module('../dominance').
:- use_module('../clock').

add(M, Id, V, VF, VT, RA) :-
    add_facts(M, [f(Id, s, attr, V, VF, VT, RA, agent, src, @(none), @(none), "", [])]).

heads(M, Hs) :- slot_heads(M, s, attr, Hs0), msort(Hs0, Hs).

:- begin_tests(clock, [cleanup(drop_memory(-9501))]).
test(advance_passes_an_end, [H0-H1-Next == [a]-[]-none]) :-
    new_memory(-9501, temporal, [agent]),
    advance(-9501, 50, _),
    add(-9501, a, 1, 10, 100, 1),
    heads(-9501, H0),
    advance(-9501, 100, Next),
    heads(-9501, H1).
test(advance_says_when_next, Next == 100) :-
    new_memory(-9501, temporal, [agent]),
    advance(-9501, 50, _),
    add(-9501, a, 1, 10, 100, 1),
    advance(-9501, 60, Next).
test(end_fact_ends_the_head, H == []) :-
    new_memory(-9501, temporal, [agent]),
    advance(-9501, 50, _),
    add(-9501, a, 1, 10, none, 1),
    end_fact(-9501, a, 40),
    heads(-9501, H).
test(end_fact_unknown, [error(existence_error(fact, nope))]) :-
    new_memory(-9501, temporal, [agent]),
    end_fact(-9501, nope, 40).
test(end_before_begin, [error(domain_error(valid_to_after_valid_from, a))]) :-
    new_memory(-9501, temporal, [agent]),
    add(-9501, a, 1, 10, none, 1),
    end_fact(-9501, a, 5).
:- end_tests(clock).
