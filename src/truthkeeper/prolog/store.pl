:- module(store,
          [ fact/10, fact/11,   % ?M, ?Id, ?S, ?A, ?Key, ?VF, ?VT, ?RA, ?Tier, ?Src(, ?Json)
            payload/3,          % ?M, ?Id, ?Json
            fact_meta/3,        % ?M, ?Id, ?Pairs (meta the memory's policy reads)
            sup/3,              % ?M, ?F, ?G: F explicitly supersedes G
            retracted/4,        % ?M, ?Id, ?RA, ?Reason
            nonce/3,            % ?M, ?Nonce, ?Id
            source_tier/5,      % ?M, ?Source, ?Layer, ?Tier, ?BoundBy
            kept_head/4,        % ?M, ?S, ?A, ?Id (of a slot that is not stale)
            stale/3,            % ?M, ?S, ?A (heads computed when the slot is first read)
            front/4,            % ?M, ?S, ?A, ?Records (the slot's frontier)
            linked/3,           % ?M, ?S, ?A (explicit supersedes links or a confirmation)
            holds/4,            % ?M, ?S, ?A, ?Key  (incremental: beliefs depend on it)
            kept_conflict/3,    % ?M, ?S, ?A (of a slot that is not stale)
            timed/3,            % ?M, ?S, ?A (a fact of the slot ends or begins later)
            many_attr/2,        % ?M, ?A (the attribute holds a set: declared many)
            member_claim/5,     % ?M, ?S, ?A, ?Member, ?Id (a fact about a set's member)
            commuting/4,        % +M, +SubjectKeys, +Sources, +Tiers
            due/6,              % ?M, ?Bucket, ?T, ?S, ?A, ?Part (a timed slot changes at T)
            mark_timed/7,       % +M, +S, +A, +Id, +Key, +ValidFrom, +ValidTo
            ended_at/4,         % +M, +KnownAt, +ValidAt, +Id (ended by ValidAt)
            end_known/4,        % ?M, ?Id, ?OldValidTo, ?RA
            fact_at/6,          % +M, +S, +A, +KnownAt, +ValidAt, -Id
            known/2, begun/2,   % +KnownAt, +RecordedAt; +ValidAt, +ValidFrom
            protected_tier/2,   % ?M, ?Tier (declared protected)
            guarded_tier/2, guarded_tiers/2,  % +M, ?Tier / -Tiers (writes need a signature)
            store_now/2,        % ?M, ?Now (the memory's clock as last advanced, or none)
            tier_rank/3,        % ?M, ?Tier, ?Rank
            mem_policy/2,       % ?M, ?Policy
            mem_gen/2,          % ?M, ?Generation (incremental: bumped by a write once read)
            touch/1,            % +M: a write happened (scopes' beliefs re-evaluate)
            gen_read/1,         % +M: a scope's beliefs are being tabled over mem_gen/2
            new_memory/3,       % +M, +Policy, +Tiers
            drop_memory/1,      % +M
            live/2, record/3,   % +M, ?Id; +M, +Id, -Record
            live_records/4,     % +M, +S, +A, -Records
            slot_live/4,        % +M, +S, +A, -Ids
            fact_count/2,       % +M, -Count
            top_tier/3,         % +M, +Protected, -Tier
            tiers_by_rank/2,    % +M, -Tiers (most authoritative first)
            count_scope/3,      % +M, +Scope, -Count
            set_status/6,       % +M, +S, +A, +KnownAt, +Status0, -Status
            bind_source/4,      % +M, +Layer-Source, +Tier, +BoundBy
            key_layer/2,        % +SubjectKey, -Layer
            use_nonce/3, unuse_nonce/2,  % +M, +Nonce(, +Owner)
            set_now/2,          % +M, +Now
            blank_fact/5,       % +M, +Id, +Payload, +S, +A
            view_source_tier/4, % +M, +Scope, +Source, -Tier (semidet)
            view_sources/3,     % +M, +Scope, -SourceTiers
            union_status/6,     % +M, +Slots, +A, +KnownAt, +Status0, -Status
            declare_attr/3, protect_tiers/2,  % +M, +Attribute, +Cardinality; +M, +Tiers
            attribute_used/2,   % +M, +Attribute (semidet)
            known_ids/3, slots/3,  % +M, +Ids, -Known; +M, ?Subject, -Slots
            unload_slots/3      % +M, +Slots, -Unloaded
          ]).
:- use_module(policies, [policy/1, tier_ranks/2, shipped/1, confirmation_source/1]).
:- use_module(library(error), [must_be/2, domain_error/2, existence_error/2,
                              permission_error/3]).
:- use_module(library(lists), [member/2, memberchk/2, reverse/2]).
:- use_module(library(pairs), [pairs_values/2]).
:- use_module(library(apply), [maplist/4]).

/** <module> The fact store: the one copy of every fact

Every Memory has an integer handle M; all its data lives in these dynamic
predicates, keyed by M, so several memories share one Prolog process without
seeing each other. Python handles are positive; the plunit fixtures use
negative handles, so a test can never touch a live memory. Nothing is deleted
from a live memory: a retraction is a retracted/4 event.

fact/10 holds what decisions need: the slot (atoms), the typed value key (see
policies), valid and transaction times (integer microseconds; VT is none when
open), tier and source atoms. payload/3 holds the fact as the user gave it
(value, text, meta, signature) as JSON text, returned to Python unread. Both are
views of fact/11, which stores the payload as its last argument: one clause a
fact, not two (100,000 facts: 13 MB less than a payload/3 clause each).
kept_head/4, holds/4 and kept_conflict/3 are maintained by dominance on every write
to a slot whose heads are known, and hold at the memory's clock (store_now/2). A slot
that a write creates is stale/3 instead: nothing is derived for it until it is first
read (dominance:head/4 and the readers that go through it compute it then), so a bulk
load asserts the facts and no derived state. Heads hold at the clock: a fact
whose valid_to has passed, or whose valid_from has not come yet, is no head. timed/3 marks the slots where
that can happen (a fact with an end, or one that begins after the clock when it
was added); their heads are computed at the clock (dominance:heads_at/6) and
again when the clock passes one of their times (clock:advance/3). Other slots keep the
incremental path. many_attr/2 marks the attributes declared to hold sets: their value
keys are m(Member, Presence) (1: in the set, 0: it left), each member with its own chain.
front/4 keeps, per slot, the frontier of its live facts (policies:frontier/2),
so that a write checks a handful of records, not the whole slot; linked/3 marks
slots with explicit supersedes links, which are decided fact by fact.
source_tier/4 binds each source name to one tier per layer ('' shared, or a
scope; by the first fact or outcome that names it there); nonce/3 holds every signature nonce used.
*/

%!  fact(?M, ?Id, ?S, ?A, ?Key, ?VF, ?VT, ?RA, ?Tier, ?Src, ?Json) is nondet.
:- dynamic fact/11.
%!  fact(?M, ?Id, ?S, ?A, ?Key, ?VF, ?VT, ?RA, ?Tier, ?Src) is nondet.
fact(M, Id, S, A, K, VF, VT, RA, Tier, Src) :- fact(M, Id, S, A, K, VF, VT, RA, Tier, Src, _).
%!  payload(?M, ?Id, ?Json) is nondet.
payload(M, Id, Json) :- fact(M, Id, _, _, _, _, _, _, _, _, Json).
%!  fact_meta(?M, ?Id, ?Pairs) is nondet.
%   Meta the memory's policy reads.
:- dynamic fact_meta/3.
%!  sup(?M, ?F, ?G) is nondet.
%   F explicitly supersedes G.
:- dynamic sup/3.
%!  retracted(?M, ?Id, ?RA, ?Reason) is nondet.
:- dynamic retracted/4.
%!  nonce(?M, ?Nonce, ?Id) is nondet.
:- dynamic nonce/3.
%!  source_tier(?M, ?Source, ?Layer, ?Tier, ?BoundBy) is nondet.
:- dynamic source_tier/5.
%!  kept_head(?M, ?S, ?A, ?Id) is nondet.
%   A head of a slot that is not stale (dominance:head/4 reads heads).
:- dynamic kept_head/4.
%!  stale(?M, ?S, ?A) is nondet.
%   The slot's heads, frontier, holds/4 and conflict are not computed yet.
:- dynamic stale/3.
%!  front(?M, ?S, ?A, ?Records) is nondet.
%   The slot's frontier.
:- dynamic front/4.
%!  linked(?M, ?S, ?A) is nondet.
%   Explicit supersedes links or a confirmation.
:- dynamic linked/3.
%!  holds(?M, ?S, ?A, ?Key) is nondet.
%   Incremental: beliefs depend on it.
:- dynamic holds/4 as incremental.
%!  kept_conflict(?M, ?S, ?A) is nondet.
%   A slot, not stale, whose heads disagree (dominance:conflict/3 reads it).
:- dynamic kept_conflict/3.
%!  timed(?M, ?S, ?A) is nondet.
%   A fact of the slot ends or begins later.
:- dynamic timed/3.
%!  end_known(?M, ?Id, ?OldVT, ?RA) is nondet: until RA (an end's) the valid_to was OldVT.
:- dynamic end_known/4.
%!  due(?M, ?Bucket, ?T, ?S, ?A, ?Part) is nondet.
%   The timed slot S, A changes at T (a fact of it begins or ends then), a time after the
%   memory's clock when it was noted; Bucket is T >> 20 (about a second), so that moving
%   the clock looks at the buckets it passes, not at every timed fact (clock:advance/3).
%   Part is m(Member) when the fact is about a set's member (only that member changes
%   then), else f(Id), the fact.
:- dynamic due/6.
%!  many_attr(?M, ?A) is nondet.
%   The attribute holds a set: declared many.
:- dynamic many_attr/2.
%!  member_claim(?M, ?S, ?A, ?Member, ?Id) is nondet.
%   The fact Id of slot S, A is about the set's member Member (its key is m(Member, _)):
%   a member's facts without a scan of the whole set.
:- dynamic member_claim/5.
%!  protected_tier(?M, ?Tier) is nondet.
%   Declared protected.
:- dynamic protected_tier/2.
%!  store_now(?M, ?Now) is nondet.
%   The memory's clock as last advanced, or none.
:- dynamic store_now/2.
%!  tier_rank(?M, ?Tier, ?Rank) is nondet.
:- dynamic tier_rank/3.
%!  mem_policy(?M, ?Policy) is nondet.
:- dynamic mem_policy/2.
%!  mem_gen(?M, ?Generation) is nondet.
%   Incremental: bumped by a write when a table read it since the last bump (touch/1).
:- dynamic mem_gen/2 as incremental.
%!  gen_is_read(?M) is nondet.
%   A table of a scope's beliefs read mem_gen/2 since it was last bumped.
:- dynamic gen_is_read/1.

:- det(new_memory/3).
:- det(touch/1).
:- det(drop_memory/1).
:- det(slot_live/4).
:- det(fact_count/2).
:- det(tiers_by_rank/2).
:- det(top_tier/3).
:- det(guarded_tiers/2).
:- det(count_scope/3).
:- det(set_status/6).

%!  new_memory(+M, +Policy, +Tiers) is det.
%
%   Register memory M with a policy and its tiers, most authoritative first.
%   @error domain_error(policy, Policy) for an unregistered policy.
new_memory(M, Policy, Tiers) :-
    must_be(integer, M),
    must_be(atom, Policy),
    must_be(list(atom), Tiers),
    (   policy(Policy)
    ->  true
    ;   domain_error(policy, Policy)
    ),
    drop_memory(M),
    assertz(mem_policy(M, Policy)),
    tier_ranks(Tiers, Pairs),
    forall(member(T-R, Pairs), assertz(tier_rank(M, T, R))),
    assertz(store_now(M, none)),
    assertz(mem_gen(M, 0)).

%!  drop_memory(+M) is det.
%
%   Forget everything memory M holds (used when a Memory is closed).
drop_memory(M) :-
    retractall(fact(M, _, _, _, _, _, _, _, _, _, _)),
    retractall(fact_meta(M, _, _)),
    retractall(sup(M, _, _)),
    retractall(retracted(M, _, _, _)),
    retractall(nonce(M, _, _)),
    retractall(source_tier(M, _, _, _, _)),
    retractall(kept_head(M, _, _, _)),
    retractall(stale(M, _, _)),
    retractall(front(M, _, _, _)),
    retractall(linked(M, _, _)),
    retractall(holds(M, _, _, _)),
    retractall(kept_conflict(M, _, _)),
    retractall(timed(M, _, _)),
    retractall(end_known(M, _, _, _)),
    retractall(many_attr(M, _)),
    retractall(member_claim(M, _, _, _, _)),
    retractall(due(M, _, _, _, _, _)),
    retractall(protected_tier(M, _)),
    retractall(store_now(M, _)),
    retractall(tier_rank(M, _, _)),
    retractall(mem_policy(M, _)),
    retractall(mem_gen(M, _)),
    retractall(gen_is_read(M)).

%!  touch(+M) is det.
%
%   Bump memory M's write generation: the tables that depend on mem_gen/2 (the
%   beliefs of a scope's view, which reads two layers) are invalidated.
%   Only when a table read the generation since it was last bumped (gen_read/1):
%   else no table depends on it, and a write leaves mem_gen/2 alone, for every update
%   of an incremental predicate costs clause and atom garbage collections (one of each
%   per few dozen updates, each scanning every atom: 14% of the time of the first reads
%   of a lazily opened memory with a rule, whose every slot loaded is a write).
touch(M) :-
    (   retract(gen_is_read(M))
    ->  retract(mem_gen(M, N0)),
        N is N0 + 1,
        assertz(mem_gen(M, N))
    ;   true
    ).

%!  gen_read(+M) is det.
%
%   A table (a scope's beliefs) reads memory M's generation: the next write bumps it.
gen_read(M) :-
    (   gen_is_read(M)
    ->  true
    ;   assertz(gen_is_read(M))
    ).

%!  live(+M, ?Id) is nondet.
%
%   Id is asserted and not retracted.
live(M, Id) :-
    fact(M, Id, _, _, _, _, _, _, _, _),
    \+ retracted(M, Id, _, _).

%!  record(+M, +Id, -Record) is semidet.
%
%   The policy record r(Id, Key, ValidFrom, RecordedAt, Rank, Source, Meta) of a fact.
record(M, Id, R) :-
    fact(M, Id, _, _, K, VF, _, RA, Tier, Src),
    fact_record(M, Id, K, VF, RA, Tier, Src, R).

%!  live_records(+M, +S, +A, -Records) is det.
%
%   The records of the slot's live facts, in recording order (one pass over the slot).
live_records(M, S, A, Recs) :-
    findall(R, ( fact(M, Id, S, A, K, VF, _, RA, Tier, Src), \+ retracted(M, Id, _, _),
                 once(fact_record(M, Id, K, VF, RA, Tier, Src, R)) ), Recs).

fact_record(M, Id, K, VF, RA, Tier, Src, r(Id, K, VF, RA, Rank, Src, Meta)) :-
    tier_rank(M, Tier, Rank),
    ( fact_meta(M, Id, Meta0) -> Meta = Meta0 ; Meta = [] ).

%!  slot_live(+M, +S, +A, -Ids) is det.
%
%   The live facts of a slot, in recording order.
slot_live(M, S, A, Ids) :-
    findall(Id, ( fact(M, Id, S, A, _, _, _, _, _, _),
                  \+ retracted(M, Id, _, _) ), Ids).

%!  fact_count(+M, -Count) is det.
fact_count(M, N) :-
    aggregate_all(count, fact(M, _, _, _, _, _, _, _, _, _), N).

%!  guarded_tier(+M, ?Tier) is nondet.
%
%   Writes at Tier need a signature: Tier is at or above the lowest tier declared
%   protected (a tier above a protected one is protected too).
guarded_tier(M, T) :-
    aggregate_all(min(R), ( protected_tier(M, P), tier_rank(M, P, R) ), Lowest),
    tier_rank(M, T, R),
    R >= Lowest.

%!  guarded_tiers(+M, -Tiers) is det.
guarded_tiers(M, Ts) :-
    findall(T, guarded_tier(M, T), Ts0),
    sort(Ts0, Ts).

%!  tiers_by_rank(+M, -Tiers) is det.
%
%   The memory's tiers by rank, the most authoritative (the largest rank) first:
%   the order every layer uses (the reliability model's tier index included).
tiers_by_rank(M, Tiers) :-
    findall(R-T, tier_rank(M, T, R), Pairs),
    keysort(Pairs, Ascending),
    pairs_values(Ascending, Up),
    reverse(Up, Tiers).

%!  top_tier(+M, +Protected, -Tier) is det.
%
%   The most authoritative tier among the guarded ones (Protected @(true)) or
%   the others (@(false)).
%   @error existence_error(tier, Protected) when there is none
top_tier(M, P, Tier) :-
    (   aggregate_all(max(R, T), ( tier_rank(M, T, R),
                                   ( guarded_tier(M, T) -> P == @(true) ; P == @(false) ) ),
                      max(_, Tier0))
    ->  Tier = Tier0
    ;   existence_error(tier, P)
    ).

%!  count_scope(+M, +Scope, -Count) is det.
%
%   The facts a view sees: the shared layer's (subjects without a scope), and
%   those of Scope (subject keys Scope + US) unless Scope is none.
count_scope(M, Scope, N) :-
    (   Scope == none
    ->  Prefix = none
    ;   atom_concat(Scope, '\x1f', Prefix)
    ),
    aggregate_all(count, ( fact(M, _, S, _, _, _, _, _, _, _), in_layers(Prefix, S) ), N).

in_layers(_, S) :- \+ sub_atom(S, _, _, _, '\x1f'), !.
in_layers(Prefix, S) :- Prefix \== none, sub_atom(S, 0, _, _, Prefix).

%!  set_status(+M, +S, +A, +KnownAt, +Status0, -Status) is det.
%
%   A set whose members all left or ended is resolved (the empty set), not
%   unknown: unknown is for a set nothing was said of.
set_status(M, S, A, K, Status0, Status) :-
    union_status(M, [S], A, K, Status0, Status).

% ---------------------------------------------------------------- sources and nonces

:- det(bind_source/4).
:- det(key_layer/2).
:- det(use_nonce/3).
:- det(unuse_nonce/2).
:- det(view_sources/3).
:- det(set_now/2).
:- det(declare_attr/3).
:- det(protect_tiers/2).
:- det(union_status/6).
:- det(blank_fact/5).
:- det(known_ids/3).
:- det(slots/3).

%!  bind_source(+M, +Layer-Source, +Tier, +BoundBy) is det.
%
%   A source name belongs to one tier in a layer: the first fact or outcome
%   naming it there binds it (BoundBy is the fact id, or an outcome marker).
%   Layer is '' (the shared layer) or a scope. In a scope, the scope's own
%   binding holds, else the shared layer's (a source the shared layer bound
%   first keeps that tier there too); no write is refused for what another scope
%   holds. With By = '$restore' (a lazy memory loading a binding the journal
%   made) the binding is recorded as it was made, unchecked; with By = '$check'
%   nothing is recorded: the binding is only checked (an outcome validated before
%   anything changes).
%   @error permission_error(bind, source_tier, Source-Tier) for another tier
bind_source(M, Layer-Src, Tier, By) :-
    (   source_tier(M, Src, Layer, T0, _)
    ->  (   T0 == Tier
        ->  true
        ;   By == '$restore'
        ->  true
        ;   permission_error(bind, source_tier, Src-T0)
        )
    ;   By \== '$restore', Layer \== '', source_tier(M, Src, '', T0, _), T0 \== Tier
    ->  permission_error(bind, source_tier, Src-T0)
    ;   By == '$check'
    ->  true
    ;   assertz(source_tier(M, Src, Layer, Tier, By))
    ).

%!  key_layer(+SubjectKey, -Layer) is det.
%
%   The layer of a store key: its scope, or '' for the shared layer.
key_layer(K, Layer) :-
    (   sub_atom(K, B, _, _, '\x1F\')
    ->  sub_atom(K, 0, B, _, Layer)
    ;   Layer = ''
    ).

%!  use_nonce(+M, +Nonce, +Owner) is det.
%
%   Record a signature nonce; using it again for the same Owner is allowed.
%   @error permission_error(reuse, nonce, Nonce) for a nonce already used
use_nonce(M, Nonce, Owner) :-
    (   nonce(M, Nonce, O0)
    ->  (   O0 == Owner
        ->  true        % one signature covering several events of one write
        ;   permission_error(reuse, nonce, Nonce)
        )
    ;   assertz(nonce(M, Nonce, Owner))
    ).

%!  unuse_nonce(+M, +Nonce) is det.
%
%   Take back a nonce whose write failed.
unuse_nonce(M, N) :-
    retractall(nonce(M, N, _)).

%!  view_source_tier(+M, +Scope, +Source, -Tier) is semidet.
%
%   The tier a source is bound to in Scope's view ('' the shared layer): the
%   scope's own binding, else the shared one.
view_source_tier(M, Sc, Src, Tier) :-
    ( source_tier(M, Src, Sc, T, _) ; source_tier(M, Src, '', T, _) ),
    !,
    Tier = T.

%!  view_sources(+M, +Scope, -SourceTiers) is det.
%
%   The sources of the facts Scope's view sees ('' the shared layer's; a
%   scope's and the shared layer's), each with its tier, sorted.
view_sources(M, Sc, Pairs) :-
    (   Sc == ''
    ->  findall(S-T, ( fact(M, _, K, _, _, _, _, _, T, S), \+ sub_atom(K, _, _, _, '\x1F\') ),
                Pairs0)
    ;   atom_concat(Sc, '\x1F\', Pre),
        findall(S-T, ( fact(M, _, K, _, _, _, _, _, T, S),
                       ( sub_atom(K, 0, _, _, Pre) -> true
                       ; \+ sub_atom(K, _, _, _, '\x1F\') ) ), Pairs0)
    ),
    sort(Pairs0, Pairs).

% ---------------------------------------------------------------- the memory's settings

%!  set_now(+M, +Now) is det.
%
%   Set the memory's clock without recomputing any slot (the caller knows no
%   fact begins or ends in between; clock:advance/3 otherwise).
set_now(M, Now) :-
    retractall(store_now(M, _)),
    assertz(store_now(M, Now)).

%!  commuting(+M, +SubjectKeys, +Sources, +Tiers) is semidet.
%   Adding plain facts (no link, no signature, ids drawn at random) of these subjects,
%   sources and tiers changes nothing another writer's fact could change meanwhile (so it
%   may be decided without the journal's tail): a shipped policy (a custom one may refuse a
%   write on what the slot holds), and each source no confirmation's and bound to that tier
%   in the fact's layer already (a binding never changes once made).
commuting(M, Ss, Srcs, Tiers) :-
    once(mem_policy(M, P)), shipped(P), maplist(bound_source(M), Ss, Srcs, Tiers).

bound_source(M, S, Src, Tier) :-
    \+ confirmation_source(Src), key_layer(S, Layer), source_tier(M, Src, Layer, Tier, _).

%!  mark_timed(+M, +S, +A, +Id, +Key, +VF, +VT) is det.
%
%   The fact Id of the slot S, A, with value key Key, begins at VF and ends at VT (or
%   none). The slot is timed when a fact of it ends, or begins after the memory's clock;
%   each time after the clock at which a timed slot changes is noted in due/6 (all its
%   facts' when it becomes timed), with the fact, or the set's member, it is about.
mark_timed(M, S, A, Id, K, VF, VT) :-
    once(store_now(M, Now)),
    (   timed(M, S, A)
    ->  note_due(M, S, A, Now, Id, K, VF, VT)
    ;   ( VT \== none ; Now \== none, VF > Now )
    ->  assertz(timed(M, S, A)),
        forall(fact(M, Id0, S, A, K0, VF0, VT0, _, _, _),
               note_due(M, S, A, Now, Id0, K0, VF0, VT0))
    ;   true
    ).

note_due(M, S, A, Now, Id, K, VF, VT) :-
    ( K = m(V, _) -> Part = m(V) ; Part = f(Id) ),
    due_at(M, S, A, Now, Part, VF),
    ( VT == none -> true ; due_at(M, S, A, Now, Part, VT) ).

due_at(M, S, A, Now, Part, T) :-
    (   ( Now == none ; T > Now )
    ->  B is T >> 20,
        assertz(due(M, B, T, S, A, Part))
    ;   true
    ).

%!  ended_at(+M, +KnownAt, +ValidAt, +Id) is semidet.
%   Its valid_to as known at KnownAt (none: the latest) is at or before ValidAt (none: no).
ended_at(_, _, none, _) :- !, fail.
ended_at(M, K, T, Id) :-
    (   K \== none,
        findall(RA-VT0, ( end_known(M, Id, VT0, RA), RA > K ), Ends), msort(Ends, [_-VT|_])
    ->  true
    ;   fact(M, Id, _, _, _, _, VT, _, _, _)
    ),
    VT \== none, VT =< T.

%!  fact_at(+M, +S, +A, +KnownAt, +ValidAt, -Id) is nondet.
%   A fact of the slot known at KnownAt and not retracted by then (known/2), begun by
%   ValidAt (begun/2); either time none: always.
fact_at(M, S, A, KnownAt, ValidAt, Id) :-
    fact(M, Id, S, A, _, VF, _, RA, _, _),
    known(KnownAt, RA),
    \+ ( retracted(M, Id, RRA, _), known(KnownAt, RRA) ),
    begun(ValidAt, VF).

known(none, _) :- !.
known(T, RA) :- RA =< T.
begun(none, _) :- !.
begun(T, VF) :- VF =< T.

%!  declare_attr(+M, +Attribute, +Cardinality) is det.
declare_attr(M, A, C) :-
    retractall(many_attr(M, A)),
    ( C == many -> assertz(many_attr(M, A)) ; true ).

%!  protect_tiers(+M, +Tiers) is det.
%
%   The tiers whose writes need a signature.
protect_tiers(M, Ts) :-
    retractall(protected_tier(M, _)),
    forall(member(T, Ts), assertz(protected_tier(M, T))).

%!  attribute_used(+M, +Attribute) is semidet.
attribute_used(M, A) :-
    once(fact(M, _, _, A, _, _, _, _, _, _)).

%!  union_status(+M, +Slots, +A, +KnownAt, +Status0, -Status) is det.
%
%   The status of a union of slots (a scope's view): a set with no heads but a
%   fact known by KnownAt and not retracted by then is resolved (every member left
%   or ended).
union_status(M, Ss, A, K, Status0, Status) :-
    (   Status0 == unknown, many_attr(M, A),
        member(S, Ss), fact_at(M, S, A, K, none, _)
    ->  Status = resolved
    ;   Status = Status0
    ).

%!  blank_fact(+M, +Id, +Payload, +S, +A) is det.
%
%   An erased fact's content goes for good: its payload becomes Payload, its
%   value key and policy meta '$erased', and it moves to the slot S, A (its
%   placeholder's). Its times, tier and source stay.
blank_fact(M, Id, Payload, S, A) :-
    once(retract(fact(M, Id, S0, A0, _, VF, VT, RA0, Tier, Src, _))),
    assertz(fact(M, Id, S, A, '$erased', VF, VT, RA0, Tier, Src, Payload)),
    retractall(member_claim(M, _, _, _, Id)),
    retractall(fact_meta(M, Id, _)),
    ( fact(M, _, S0, A0, _, _, _, _, _, _) -> true ; drop_derived(M, S0, A0) ).

%!  known_ids(+M, +Ids, -Known) is det.
%
%   The ids among Ids of facts the store holds.
known_ids(M, Ids, Known) :-
    findall(Id, ( member(Id, Ids), once(fact(M, Id, _, _, _, _, _, _, _, _)) ), Known).

%!  slots(+M, ?Subject, -Slots) is det.
%
%   Every slot that holds a fact (of Subject when it is bound: its facts alone are
%   read), as S-A pairs, sorted.
slots(M, S, Slots) :-
    findall(S-A, fact(M, _, S, A, _, _, _, _, _, _), Slots0),
    sort(Slots0, Slots).

%!  unload_slots(+M, +Slots, -Unloaded) is det.
%
%   Take the facts of the slots -(Key, S, A) out of the store, with all that was
%   derived from them, as if they had never been read in: a lazily opened memory
%   reads such a slot from its journal again when it is next asked about.
%   Unloaded are the Keys of the slots taken out: not a slot with a supersedes
%   link or a confirmation, nor an erased fact's placeholder slot (links may cross
%   slots there). Source bindings and nonces stay: they are the memory's, not a
%   slot's. The caller is a memory that has not read every slot, so no belief was
%   derived from holds/4 yet (beliefs read every slot first).
unload_slots(M, Slots, Unloaded) :-
    findall(K, ( member(-(K, S, A), Slots), unloadable(M, S, A) ), Unloaded),
    forall(( member(-(K, S, A), Slots), memberchk(K, Unloaded) ), unload_slot(M, S, A)).

unloadable(M, S, A) :-
    A \== '$erased',
    \+ linked(M, S, A),
    \+ ( fact(M, F, S, A, _, _, _, _, _, _), ( sup(M, F, _) ; sup(M, _, F) ) ).

unload_slot(M, S, A) :-
    forall(fact(M, Id, S, A, _, _, _, _, _, _),
           ( retractall(fact_meta(M, Id, _)), retractall(end_known(M, Id, _, _)),
             retractall(retracted(M, Id, _, _)) )),
    retractall(fact(M, _, S, A, _, _, _, _, _, _, _)),
    drop_derived(M, S, A).

% drop_derived(+M, +S, +A): what was derived of a slot that holds no fact (any more).
drop_derived(M, S, A) :-
    retractall(member_claim(M, S, A, _, _)), retractall(due(M, _, _, S, A, _)),
    retractall(kept_head(M, S, A, _)), retractall(stale(M, S, A)),
    retractall(front(M, S, A, _)), retractall(holds(M, S, A, _)),
    retractall(kept_conflict(M, S, A)), retractall(timed(M, S, A)), retractall(linked(M, S, A)).
