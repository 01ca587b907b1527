:- use_module('../store').
:- use_module('../dominance').

add(M, Id, S, V, VF, RA, Tier) :-
    assertz(tk_store:fact(M, Id, S, attr, V, VF, none, RA, Tier, src)),
    insert_update(M, Id),
    refresh_holds(M, S, attr).

heads(M, S, Hs) :- slot_heads(M, S, attr, Hs0), msort(Hs0, Hs).

:- begin_tests(dominance, [cleanup(drop_memory(9101))]).
test(chain_collapses, Hs == [c]) :-
    new_memory(9101, temporal_within_authority, [human, verified, agent]),
    add(9101, a, s, 1, 10, 1, agent), add(9101, b, s, 2, 20, 2, agent), add(9101, c, s, 3, 30, 3, agent),
    heads(9101, s, Hs).
test(out_of_order_insert, Hs == [c]) :-
    new_memory(9101, temporal, [agent]),
    add(9101, c, s, 3, 30, 1, agent), add(9101, a, s, 1, 10, 2, agent), add(9101, b, s, 2, 20, 3, agent),
    heads(9101, s, Hs).
test(lower_tier_newer_is_conflict, [Hs == [agent_guess, email], C == true]) :-
    new_memory(9101, temporal_within_authority, [human, verified, agent]),
    add(9101, email, s, 4500, 10, 1, verified), add(9101, agent_guess, s, 5000, 20, 2, agent),
    heads(9101, s, Hs),
    ( conflict(9101, s, attr) -> C = true ; C = false ).
test(corroboration_keeps_both, [Hs == [a, b], V == 7]) :-
    new_memory(9101, temporal, [agent]),
    add(9101, a, s, 7, 10, 1, agent), add(9101, b, s, 7, 20, 2, agent),
    heads(9101, s, Hs), holds(9101, s, attr, V).
test(explicit_link_beats_time, Hs == [old]) :-
    new_memory(9101, temporal, [agent]),
    add(9101, new, s, 2, 20, 1, agent),
    assertz(tk_store:fact(9101, old, s, attr, 1, 10, none, 2, agent, src)),
    assertz(tk_store:sup(9101, old, new)),
    insert_update(9101, old),
    heads(9101, s, Hs).
test(cross_slot, P == cross_slot) :-
    new_memory(9101, temporal, [agent]),
    add(9101, a, s1, 1, 10, 1, agent), add(9101, b, s2, 2, 20, 2, agent),
    check_link(9101, b, a, P).
test(lower_tier_link, P == lower_tier) :-
    new_memory(9101, temporal, [human, agent]),
    add(9101, h, s, 1, 10, 1, human), add(9101, a, s, 2, 20, 2, agent),
    check_link(9101, a, h, P).
test(cycle, P == cycle) :-
    new_memory(9101, temporal, [agent]),
    add(9101, a, s, 1, 10, 1, agent), add(9101, b, s, 2, 20, 2, agent),
    assertz(tk_store:sup(9101, a, b)), assertz(tk_store:sup(9101, b, a)),
    check_link(9101, b, a, P).
test(unknown_target, P == unknown_fact) :-
    new_memory(9101, temporal, [agent]),
    add(9101, a, s, 1, 10, 1, agent),
    check_link(9101, a, zzz, P).
test(retraction_restores_previous_head, Hs == [a]) :-
    new_memory(9101, temporal, [agent]),
    add(9101, a, s, 1, 10, 1, agent), add(9101, b, s, 2, 20, 2, agent),
    assertz(tk_store:retracted(9101, b, 3)), recompute_slot(9101, s, attr),
    heads(9101, s, Hs).
test(heads_known_at, Hs == [a]) :-
    new_memory(9101, temporal, [agent]),
    add(9101, a, s, 1, 10, 100, agent), add(9101, b, s, 2, 20, 200, agent),
    heads_at(9101, s, attr, 150, none, Hs).
test(heads_valid_at, Hs == [a]) :-
    new_memory(9101, temporal, [agent]),
    add(9101, a, s, 1, 10, 100, agent), add(9101, b, s, 2, 20, 200, agent),
    heads_at(9101, s, attr, none, 15, Hs).
test(dominators_and_dominated, [Ds == [b], Dd == [a]]) :-
    new_memory(9101, temporal, [agent]),
    add(9101, a, s, 1, 10, 1, agent), add(9101, b, s, 2, 20, 2, agent),
    dominators(9101, a, Ds), dominated(9101, b, Dd).
:- end_tests(dominance).
