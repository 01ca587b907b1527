:- use_module('../phi').

:- begin_tests(phi).
test(newest_drops_older_conflicting, Ds == [1-3, 2-3]) :-
    phi_filter(temporal, [c(1, k, x, 10, 0), c(2, k, y, 20, 0), c(3, k, z, 30, 0)], Ds).
test(same_value_kept, Ds == [1-3]) :-
    phi_filter(temporal, [c(1, k, x, 10, 0), c(2, k, z, 20, 0), c(3, k, z, 30, 0)], Ds).
test(other_slots_independent, Ds == []) :-
    phi_filter(temporal, [c(1, k1, x, 10, 0), c(2, k2, y, 20, 0)], Ds).
test(ties_kept, Ds == []) :-
    phi_filter(temporal, [c(1, k, x, 10, 0), c(2, k, y, 10, 0)], Ds).
test(older_value_restated_later, Ds == [2-3]) :-
    % x at 10, y at 20, x again at 30: y is stale; the old x is dominated by y
    % only in time order, but the newest x makes the slot's answer x.
    phi_filter(temporal, [c(1, k, x, 30, 0), c(2, k, y, 20, 0), c(3, k, x, 10, 0)], Ds0),
    Ds0 = [2-1|_], Ds = [2-3].
test(within_authority_keeps_higher_older, Ds == []) :-
    phi_filter(temporal_within_authority, [c(1, k, x, 10, 2), c(2, k, y, 20, 1)], Ds).
test(authority_first_drops_lower_newer, Ds == [2-1]) :-
    phi_filter(authority_first, [c(1, k, x, 10, 2), c(2, k, y, 20, 1)], Ds).
test(idempotent, Ds2 == []) :-
    Cs = [c(1, k, x, 10, 0), c(2, k, y, 20, 0), c(3, j, z, 5, 0)],
    phi_filter(temporal, Cs, Ds),
    pairs_keys(Ds, Dropped),
    exclude([c(I, _, _, _, _)]>>memberchk(I, Dropped), Cs, Kept),
    phi_filter(temporal, Kept, Ds2).
:- end_tests(phi).
