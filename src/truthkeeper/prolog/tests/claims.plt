:- use_module('../store').
:- use_module('../dominance').
:- use_module('../claims').

fact_in(M, Id, S, K, Src) :-
    add_facts(M, [f(Id, S, pet, K, 10, none, 1, agent, Src, @(none), @(none), "", [])]).

:- begin_tests(claims, [cleanup(forall(member(M, [-9501, -9502]), drop_memory(M)))]).

test(set_members_are_items_of_their_own, Items == [-([a], [0], 1, -1, ["m(cat,1)"], pet),
                                                  -([b], [0], 1, -1, ["m(dog,1)"], pet)]) :-
    new_memory(-9501, temporal, [agent]),
    assertz(store:many_attr(-9501, pet)),
    fact_in(-9501, f1, ana, m(cat, 1), a),
    fact_in(-9501, f2, ana, m(dog, 1), b),
    claims(-9501, [], Items).
test(a_confirmation_is_the_label_not_a_claim, Items == [-([a], [0], 1, 0, [cat], pet)]) :-
    new_memory(-9502, temporal, [agent]),
    fact_in(-9502, f1, ana, cat, a),
    fact_in(-9502, f2, ana, cat, 'confirmation:agent'),
    claims(-9502, [f2], Items).

:- end_tests(claims).
