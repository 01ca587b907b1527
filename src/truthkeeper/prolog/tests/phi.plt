:- use_module('../phi').
:- use_module('../policies', []).

% c(Index, SlotKey, r(Index, Key, Tau, RecordedAt, Rank, Source, []))
c(I, K, V, T, R, c(I, K, r(I, V, T, none, R, @(none), []))).

cs(Specs, Cs) :- maplist([I-K-V-T-R, C]>>c(I, K, V, T, R, C), Specs, Cs).

:- begin_tests(phi).
test(newest_drops_older_conflicting, Ds == [1-3, 2-3]) :-
    cs([1-k-x-10-0, 2-k-y-20-0, 3-k-z-30-0], Cs), phi_filter(temporal, Cs, Ds).
test(same_value_kept, Ds == [1-3]) :-
    cs([1-k-x-10-0, 2-k-z-20-0, 3-k-z-30-0], Cs), phi_filter(temporal, Cs, Ds).
test(other_slots_independent, Ds == []) :-
    cs([1-k1-x-10-0, 2-k2-y-20-0], Cs), phi_filter(temporal, Cs, Ds).
test(ties_kept, Ds == []) :-
    cs([1-k-x-10-0, 2-k-y-10-0], Cs), phi_filter(temporal, Cs, Ds).
test(older_value_restated_later, Ds == [2-1]) :-
    cs([1-k-x-30-0, 2-k-y-20-0, 3-k-x-10-0], Cs0), phi_filter(temporal, Cs0, Ds0),
    msort(Ds0, [D|_]), Ds = [D].
test(within_authority_keeps_higher_older, Ds == []) :-
    cs([1-k-x-10-2, 2-k-y-20-1], Cs), phi_filter(temporal_within_authority, Cs, Ds).
test(authority_first_drops_lower_newer, Ds == [2-1]) :-
    cs([1-k-x-10-2, 2-k-y-20-1], Cs), phi_filter(authority_first, Cs, Ds).
test(frontier_matches_pairwise_definition, forall(member(P, [temporal, authority_first, temporal_within_authority]))) :-
    cs([1-k-x-30-1, 2-k-y-40-1, 3-k-z-10-0, 4-k-x-20-0, 5-k-y-40-2, 6-k-w-40-1,
        7-k-x-5-2, 8-k-z-40-0, 9-j-x-1-0], Cs),
    phi_filter(P, Cs, Ds), pairs_keys(Ds, Dropped),
    findall(I, ( member(c(I, K, G), Cs),
                 once(( member(c(J, K2, F), Cs), K2 == K, J \== I,
                        policies:policy_dominates(P, F, G) )) ), Expected0),
    msort(Expected0, Expected),
    Dropped == Expected.
test(idempotent, Ds2 == []) :-
    cs([1-k-x-10-0, 2-k-y-20-0, 3-j-z-5-0], Cs),
    phi_filter(temporal, Cs, Ds),
    pairs_keys(Ds, Dropped),
    exclude([c(I, _, _)]>>memberchk(I, Dropped), Cs, Kept),
    phi_filter(temporal, Kept, Ds2).
:- end_tests(phi).
