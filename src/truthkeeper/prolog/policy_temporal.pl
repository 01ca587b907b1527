:- module(policy_temporal,
          [ dominates/2,        % +Record, +Record
            newer/2             % +Record, +Record
          ]).

/** <module> The temporal policy: the GC-Mem dominance operator Phi_T

A record is r(Id, Value, ValidFrom, TieBreak, Rank). F dominates G iff
kappa(F, G) (same slot, different value; the caller only compares facts
of one slot) and tau(F) > tau(G). Ties on valid_from break by TieBreak
(the store passes recorded_at, which is unique), so the relation is a
strict order per slot. Retrieved candidates pass TieBreak = 0: equal
times then dominate neither way.
*/

%!  dominates(+F, +G) is semidet.
%
%   F makes G obsolete: values differ and F is strictly newer.
dominates(F, G) :-
    F = r(_, VF, _, _, _),
    G = r(_, VG, _, _, _),
    VF \== VG,
    newer(F, G).

%!  newer(+F, +G) is semidet.
%
%   F is strictly newer than G in valid time, ties broken by the tie-break key.
newer(r(_, _, T1, B1, _), r(_, _, T2, B2, _)) :-
    (   T1 > T2
    ->  true
    ;   T1 =:= T2,
        B1 @> B2
    ).
