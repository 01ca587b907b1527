:- module(policy_authority_first,
          [ dominates/2         % +Record, +Record
          ]).
:- use_module(policy_temporal, [newer/2]).

/** <module> The authority-first policy (the provenance store of seed 003)

A higher tier wins whatever the times; within one tier the newer fact wins.
Records are r(Id, Value, ValidFrom, TieBreak, Rank) with a larger Rank for a
more authoritative tier.
*/

%!  dominates(+F, +G) is semidet.
dominates(F, G) :-
    F = r(_, VF, _, _, RF),
    G = r(_, VG, _, _, RG),
    VF \== VG,
    (   RF > RG
    ->  true
    ;   RF =:= RG,
        newer(F, G)
    ).
