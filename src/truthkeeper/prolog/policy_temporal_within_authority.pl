:- module(policy_temporal_within_authority,
          [ dominates/2         % +Record, +Record
          ]).
:- use_module(policy_temporal, [newer/2]).

/** <module> The default policy: temporal dominance within authority

F dominates G iff their values differ, F is newer and F's tier ranks at
least as high as G's. A newer fact from a lower tier does not make an older
higher-tier fact obsolete: both stay heads and the slot is a residual
conflict for the Bayesian layer.
*/

%!  dominates(+F, +G) is semidet.
dominates(F, G) :-
    F = r(_, VF, _, _, RF),
    G = r(_, VG, _, _, RG),
    VF \== VG,
    RF >= RG,
    newer(F, G).
