:- module(dominance,
          [ dominates/3,            % +M, +F, +G
            add_facts/2,            % +M, +Recs
            add_facts/3,            % +M, +Recs, +Drawn
            retract_fact/4,         % +M, +Id, +RA, +Reason
            undo_facts/2,           % +M, +Ids
            unretract/2,            % +M, +Id
            slot_heads/4,           % +M, +S, +A, -Heads
            recompute_slot/3,       % +M, +S, +A
            slot_groups/2,          % +SortedTriples, -Groups
            pass_facts/5,           % +M, +S, +A, +Ids, +Old
            heads_at/6,             % +M, +S, +A, +KnownAt, +ValidAt, -Heads
            heads_at/7,             % +M, +S, +A, +KnownAt, +ValidAt, -Heads, -Front
            slot_heads_among/4,     % +M, +A, +Ids, -Heads
            monotone_slot/4,        % +M, +S, +A, -Policy
            ended/3,                % +M, +Id, +Now
            heads_holds/4,          % +M, +A, +Heads, -Values
            head/4,                 % +M, ?S, ?A, ?Id (computed when the slot is stale)
            conflict/3,             % +M, ?S, ?A
            fresh/3,                % +M, +S, +A
            fresh_all/1             % +M
          ]).
:- use_module(store, [bind_source/4, key_layer/2, use_nonce/3, fact/10, fact/11,
                      fact_meta/3, sup/3, retracted/4, kept_head/4, stale/3,
                      front/4, linked/3, holds/4, kept_conflict/3, tier_rank/3, mem_policy/2,
                      record/3, live_records/4, slot_live/4, timed/3, store_now/2, many_attr/2, touch/1,
                      member_claim/5, mark_timed/7, ended_at/4, fact_at/6, begun/2,
                      fact_count/2, nonce/3, source_tier/5]).
:- use_module(reclaim, [drop_heads/4, clear_heads/3]).
:- use_module(policies, [policy_dominates/3, monotone/1, frontier/2, newest_first/2,
                          insert_newest/3, shipped/1, heads_by_frontier/4,
                          confirmation_source/1, front_index/2, front_dominated/3]).
:- use_module(members, [member_heads/4, update_set/4, members_holds/4, member_linked/4,
                         update_member/4]).
:- use_module(library(lists), [member/2, append/3]).
:- use_module(library(apply), [include/3, exclude/3, maplist/3, maplist/4, foldl/4]).
:- use_module(library(pairs), [pairs_values/2]).
:- use_module(library(ordsets), [ord_subtract/3]).
:- use_module(links, [check_link_ends/3, no_cycle/2]).
:- reexport(chains, [dominates/3, heads_among/3]).
:- use_module(chains, [linked_monotone/4, linked_heads/5, insert_linked/6]).
:- use_module(library(error), [existence_error/2, permission_error/3, domain_error/2]).

/** <module> Dominance, chain heads, residual conflicts, and the writes that keep them

dominates(M, F, G) (chains:dominates/3, exported from here too): F makes G
obsolete in memory M. An explicit link F supersedes G decides it whatever the
times; a link G supersedes F excludes it; otherwise the memory's policy decides
(policies:policy_dominates/3). A chain head is a live fact that no live fact
dominates. Heads, holds/4 and conflict/3
are kept current on every write to a slot whose heads are known; a slot a write
creates is stale/3 until first read (head/4, conflict/3, slot_heads/4, fresh/3), so a
bulk load derives nothing. Beliefs (tabled over holds/4) call fresh_all/1 first.

Writes raise ISO error terms (library(error)); the Python bridge maps them to
the truthkeeper error family in one table:

  - permission_error(add, fact_id, Id): the id is taken
  - permission_error(reuse, nonce, Nonce): a replayed signature
  - permission_error(bind, source_tier, Source-Tier): the source belongs to Tier
  - existence_error(fact, Id): supersedes or retract names no fact
  - permission_error(supersede, other_slot | higher_tier | cycle, F-G)
  - permission_error(retract, retracted_fact, Id)
*/

:- det(add_facts/2).
:- det(add_facts/3).
:- det(retract_fact/4).
:- det(undo_facts/2).
:- det(unretract/2).
:- det(slot_heads/4).
:- det(fresh/3).
:- det(fresh_all/1).
:- det(recompute_slot/3).
:- det(heads_at/6).
:- det(heads_at/7).

%!  add_facts(+M, +Recs) is det.
%
%   Add a batch of f(Id, S, A, Key, VF, VT, RA, Tier, Src, Sup, Nonce, Json, Meta)
%   atomically (Sup and Nonce are @(none) when absent; Meta the Key-Value pairs the
%   policy reads) (a transaction): every fact, or none and an error.
add_facts(M, Recs) :-
    add_facts(M, Recs, false).

%!  add_facts(+M, +Recs, +Drawn) is det.
%
%   add_facts/2 where Drawn (true) says that every id of the batch was drawn at random
%   for it, which no fact holds: they are not looked up (a lookup per fact among the
%   batch's asserts was a fifth of a bulk load's time in Prolog).
add_facts(M, Recs, Drawn) :-
    transaction(add_recs(M, Recs, Drawn)).

add_recs(M, Recs, Drawn) :-
    % a new slot waits for its first read under a shipped policy (which never raises); a
    % custom one is run on every write, so that a policy that raises refuses the write
    ( once(mem_policy(M, P)), shipped(P) -> Defer = true ; Defer = false ),
    assert_recs(Recs, M, Defer-Drawn, Keyed0),          % a stale slot waits for its first read
    forall(member(R, Recs), check_rec_link(M, R)),
    no_cycle(M, Recs),
    msort(Keyed0, Keyed),
    slot_groups(Keyed, Groups),
    forall(member(S-A-Ids, Groups), update_slot(M, S, A, Ids)),
    touch(M).

% assert_recs(+Recs, +M, +Defer, -Keyed): assert each record; Keyed are the S-A-Id of
% those whose slot is not stale (a slot stale before a record of it is asserted stays so
% for the batch, and one that is not never becomes so: only a slot without facts does)
assert_recs([], _, _, []).
assert_recs([R|Rs], M, Defer, Keyed) :-
    assert_rec(M, Defer, R, Stale),
    (   Stale == true
    ->  Keyed = Keyed1
    ;   R = f(Id, S, A, _, _, _, _, _, _, _, _, _, _),
        Keyed = [S-A-Id|Keyed1]
    ),
    assert_recs(Rs, M, Defer, Keyed1).

assert_rec(M, Defer-Drawn, f(Id, S, A, K, VF, VT, RA, Tier, Src, Sup, Nonce, Json, Meta),
           Stale) :-
    (   Drawn == false,
        fact(M, Id, _, _, _, _, _, _, _, _)
    ->  permission_error(add, fact_id, Id)
    ;   true
    ),
    (   Nonce == @(none)
    ->  true
    ;   use_nonce(M, Nonce, Id)
    ),
    key_layer(S, Layer),
    bind_source(M, Layer-Src, Tier, Id),
    (   stale(M, S, A)
    ->  Stale = true
    ;   ( Defer == false ; fact(M, _, S, A, _, _, _, _, _, _) )
    ->  Stale = false
    ;   assertz(stale(M, S, A)),        % a new slot: derived when first read
        Stale = true
    ),
    assertz(fact(M, Id, S, A, K, VF, VT, RA, Tier, Src, Json)),  % its payload with it
    ( K = m(V, _) -> assertz(member_claim(M, S, A, V, Id)) ; true ),
    mark_timed(M, S, A, Id, K, VF, VT),
    ( Meta == [] -> true ; assertz(fact_meta(M, Id, Meta)) ),
    (   Sup == @(none), \+ confirmation_source(Src)
    ->  true
    ;   ( Sup == @(none) -> true ; assertz(sup(M, Id, Sup)) ),
        % explicit links and confirmations are decided fact by fact, not by the frontier
        ( linked(M, S, A) -> true ; assertz(linked(M, S, A)) )
    ).

check_rec_link(M, f(Id, _, _, _, _, _, _, _, _, Sup, _, _, _)) :-
    (   Sup == @(none)
    ->  true
    ;   check_link_ends(M, Id, Sup)
    ).

%!  slot_groups(+SortedTriples, -Groups) is det.
%
%   S-A-X triples sorted by slot, grouped as S-A-[X...] per slot.
slot_groups([], []).
slot_groups([S-A-Id|T], [S-A-[Id|Ids]|Gs]) :-
    same_slot(T, S, A, Ids, Rest),
    slot_groups(Rest, Gs).

same_slot([S0-A0-Id|T], S, A, [Id|Ids], Rest) :-
    S0 == S, A0 == A, !,
    same_slot(T, S, A, Ids, Rest).
same_slot(Rest, _, _, [], Rest).

% A slot whose facts end or begin later: its heads at the memory's clock. One new fact
% under a monotone policy goes through the frontier of the facts begun by then (a fact
% that begins later changes nothing until the clock passes it), and so under links or a
% confirmation through the slot's front; a set's written members are updated apart
% (members:update_set/4); otherwise all again.
update_slot(M, S, A, Ids) :-
    timed(M, S, A),
    !,
    (   Ids = [Id], front_kind(M, S, A, Kind)
    ->  once(store_now(M, Now)),
        fact(M, Id, _, _, _, VF, _, _, _, _),
        (   begun(Now, VF)
        ->  insert_at(Kind, M, S, A, Id, Now),
            refresh_holds(M, S, A)
        ;   true
        )
    ;   update_set(M, S, A, Ids)                  % a set's written members, at the clock
    ->  true
    ;   recompute_slot(M, S, A)
    ).
% A monotone policy on a slot without explicit links: each new fact is checked against
% the slot's frontier and its heads only, whatever the slot's size.
update_slot(M, S, A, Ids) :-
    frontier_slot(M, S, A, P),
    !,
    (   Ids = [Id]
    ->  insert_front(M, P, S, A, Id)
    ;   insert_batch(M, P, S, A, Ids)
    ),
    refresh_holds(M, S, A).
% A set whose written members neither link nor are linked: those members alone.
update_slot(M, S, A, Ids) :-
    update_set(M, S, A, Ids),
    !.
% One fact into a slot with explicit links under a monotone policy that keeps its
% front: checked against the links to it and that front (chains:insert_linked/6).
update_slot(M, S, A, [Id]) :-
    linked_monotone(M, S, A, P),
    front(M, S, A, _),
    !,
    insert_linked(M, P, S, A, Id, none),
    refresh_holds(M, S, A).
% A batch (a replay) into a slot with explicit links under a monotone policy: at once.
update_slot(M, S, A, [_, _|_]) :-
    linked_monotone(M, S, A, _),
    !,
    recompute_slot(M, S, A).
% Otherwise (explicit links, a policy that is not monotone): fact by fact, linear.
update_slot(M, S, A, Ids) :-
    forall(member(Id, Ids), insert_update(M, Id)),
    refresh_holds(M, S, A).

% front_kind(+M, +S, +A, -Kind): the slot keeps its front under a monotone policy:
% plain(P) without links (its frontier), linked(P) with links or a confirmation (its
% frontier and every confirmation: chains:linked_heads/5)
front_kind(M, S, A, Kind) :-
    (   monotone_slot(M, S, A, P)
    ->  Kind = plain(P)
    ;   linked_monotone(M, S, A, P)
    ->  Kind = linked(P)
    ),
    front(M, S, A, _).

% insert_at(+Kind, +M, +S, +A, +Id, +Now): Id, begun by the clock Now, joins the front
insert_at(plain(P), M, S, A, Id, Now) :-
    insert_front(M, P, S, A, Id, Now).
insert_at(linked(P), M, S, A, Id, Now) :-
    insert_linked(M, P, S, A, Id, Now).

%!  pass_facts(+M, +S, +A, +Ids, +Old) is semidet.
%
%   The clock moved from Old to the memory's clock past a time of the facts Ids of the
%   timed slot S, A, which keeps its front (a monotone policy): each that began since joins
%   it as a write at the clock would, and the heads among them that ended by now go (an
%   ended fact still dominates: the facts it dominates do not come back). Fails, changing
%   nothing, when the slot is stale, keeps no front, or one of them left it (erased).
pass_facts(M, S, A, Ids0, Old) :-
    \+ stale(M, S, A),
    sort(Ids0, Ids),
    front_kind(M, S, A, Kind),
    forall(member(Id, Ids), fact(M, Id, S, A, _, _, _, _, _, _)),
    once(store_now(M, Now)),
    touch(M),
    forall(( member(Id, Ids), \+ retracted(M, Id, _, _),
             fact(M, Id, _, _, _, VF, _, _, _, _), VF > Old, VF =< Now ),
           insert_at(Kind, M, S, A, Id, Now)),
    findall(Id, ( member(Id, Ids), kept_head(M, S, A, Id), ended_at(M, none, Now, Id) ),
            Ended),
    drop_heads(M, S, A, Ended),
    refresh_holds(M, S, A).

% frontier_slot(+M, +S, +A, -Policy): the slot's heads follow from its frontier.
frontier_slot(M, S, A, P) :-
    monotone_slot(M, S, A, P),
    \+ timed(M, S, A).

% insert_front(+M, +P, +S, +A, +Id): Id was just asserted into a frontier slot.
% insert_front(+M, +P, +S, +A, +Id, +Now): of a timed slot, at the clock Now: Id is no
% head once ended (it still dominates the facts older than it).
insert_front(M, P, S, A, Id) :-
    insert_front(M, P, S, A, Id, none).
insert_front(M, P, S, A, Id, Now) :-
    once(record(M, Id, R)),
    ( front(M, S, A, F0) -> true ; F0 = [] ),
    findall(H, ( kept_head(M, S, A, H), once(record(M, H, RH)), policy_dominates(P, R, RH) ),
            Gone),
    drop_heads(M, S, A, Gone),
    (   ( member(Fr, F0), policy_dominates(P, Fr, R) ; ended_at(M, none, Now, Id) )
    ->  true
    ;   assertz(kept_head(M, S, A, Id))
    ),
    insert_newest(R, F0, Sorted),                 % F0 is newest first already
    frontier(Sorted, F1),
    retractall(front(M, S, A, _)),
    assertz(front(M, S, A, F1)).

% insert_batch(+M, +P, +S, +A, +Ids): several facts of one slot at once. The old heads
% that a new fact dominates go; a new fact is a head when no record of the frontier of
% (old frontier + new facts) dominates it; that frontier is the slot's new one.
insert_batch(M, P, S, A, Ids) :-
    findall(R, ( member(Id, Ids), once(record(M, Id, R)) ), New),
    ( front(M, S, A, F0) -> true ; F0 = [] ),
    findall(H, ( kept_head(M, S, A, H), once(record(M, H, RH)),
                 once(( member(R, New), policy_dominates(P, R, RH) )) ), Gone),
    drop_heads(M, S, A, Gone),
    append(New, F0, All),
    newest_first(All, Sorted),
    frontier(Sorted, F1),
    front_index(F1, Index),
    forall(( member(R, New), \+ front_dominated(P, Index, R), arg(1, R, Id) ),
           assertz(kept_head(M, S, A, Id))),
    retractall(front(M, S, A, _)),
    assertz(front(M, S, A, F1)).

% insert_update(+M, +Id): Id has just been asserted: drop the heads it dominates and
% make it a head when no live fact of its slot dominates it.
insert_update(M, Id) :-
    fact(M, Id, S, A, _, _, _, _, _, _),
    findall(H, ( kept_head(M, S, A, H), dominates(M, Id, H) ), Gone),
    drop_heads(M, S, A, Gone),
    (   fact(M, G, S, A, _, _, _, _, _, _),
        G \== Id,
        \+ retracted(M, G, _, _),
        dominates(M, G, Id)
    ->  true
    ;   assertz(kept_head(M, S, A, Id))
    ).

%!  retract_fact(+M, +Id, +RA, +Reason) is det.
retract_fact(M, Id, RA, Reason) :-
    (   \+ fact(M, Id, _, _, _, _, _, _, _, _)
    ->  existence_error(fact, Id)
    ;   retracted(M, Id, _, _)
    ->  permission_error(retract, retracted_fact, Id)
    ;   assertz(retracted(M, Id, RA, Reason)),
        once(fact(M, Id, S, A, _, _, _, _, _, _)),
        (   stale(M, S, A)
        ->  true    % derived when first read, the retraction included
        ;   monotone_slot(M, S, A, _),              % timed or not: it keeps its frontier
            front(M, S, A, F),
            \+ kept_head(M, S, A, Id),
            \+ ( member(R, F), arg(1, R, Id) )
        ->  true    % neither a head nor in the frontier (of a timed slot: of the facts
                    % begun by the clock): no head changes
        ;   member_claim(M, S, A, V, Id),
            \+ member_linked(M, S, A, V)
        ->  touch(M),
            update_member(M, S, A, V)
        ;   recompute_slot(M, S, A)
        )
    ).

%!  undo_facts(+M, +Ids) is det.
%
%   Remove facts whose journal commit failed (they were never acknowledged)
%   and recompute the heads of their slots.
undo_facts(M, Ids) :-
    findall(S-A, ( member(Id, Ids), fact(M, Id, S, A, _, _, _, _, _, _) ), Slots0),
    sort(Slots0, Slots),
    forall(member(Id, Ids),
           ( retractall(fact(M, Id, _, _, _, _, _, _, _, _, _)),
             retractall(member_claim(M, _, _, _, Id)),
             retractall(fact_meta(M, Id, _)),
             retractall(nonce(M, _, Id)),
             retractall(source_tier(M, _, _, _, Id)),
             retractall(sup(M, Id, _)),
             retractall(kept_head(M, _, _, Id)) )),
    forall(member(S-A, Slots),
           ( \+ ( fact(M, F, S, A, _, _, _, _, _, Src),
                  ( sup(M, F, _) ; confirmation_source(Src) ) )
           -> retractall(linked(M, S, A)) ; true )),
    forall(member(S-A, Slots), recompute_slot(M, S, A)).

%!  unretract(+M, +Id) is det.
%
%   Undo a retraction whose journal commit failed.
unretract(M, Id) :-
    retractall(retracted(M, Id, _, _)),
    (   once(fact(M, Id, S, A, _, _, _, _, _, _))
    ->  recompute_slot(M, S, A)
    ;   true
    ).

% slot_heads_among(+M, +A, +Ids, -Heads): heads_among/3 of live facts of one slot (or of a
% view's layers) of attribute A; a set's by member where that holds (members:member_heads/4).
slot_heads_among(M, A, Ids, Heads) :-
    (   member_heads(M, A, Ids, Heads0)
    ->  Heads = Heads0
    ;   heads_among(M, Ids, Heads)
    ).

%!  slot_heads(+M, +S, +A, -Heads) is det.
slot_heads(M, S, A, Heads) :-
    fresh(M, S, A),
    findall(H, kept_head(M, S, A, H), Heads).

%!  head(+M, ?S, ?A, ?Id) is nondet.
%
%   Id is a head of the slot S, A: its kept head, computed first when the slot is
%   stale (every stale slot when S or A is unbound).
head(M, S, A, Id) :-
    fresh_for(M, S, A),
    kept_head(M, S, A, Id).

%!  conflict(+M, ?S, ?A) is nondet.
%
%   The heads of the slot S, A disagree (head/4's stale slots computed first).
conflict(M, S, A) :-
    fresh_for(M, S, A),
    kept_conflict(M, S, A).

% fresh_for(+M, ?S, ?A): the slot fresh, or every slot when it is not named.
fresh_for(M, S, A) :-
    (   atom(S), atom(A)
    ->  fresh(M, S, A)
    ;   fresh_all(M)
    ).

%!  fresh(+M, +S, +A) is det.
%   Derive the slot's heads, frontier, holds/4 and conflict if it is stale: not a
%   write (what the memory answers does not change), so no touch/1.
fresh(M, S, A) :-
    (   stale(M, S, A),                           % a lookup: cheaper than a failed retract
        retract(stale(M, S, A))
    ->  (   frontier_slot(M, S, A, P)
        ->  first_heads(M, P, S, A)
        ;   derive_heads(M, S, A)
        )
    ;   true
    ).

% first_heads(+M, +P, +S, +A): a stale slot of a monotone policy holds nothing derived
% yet: its heads by its frontier, asserted with what they hold (refresh_holds/3 without
% comparing with what was there: a third of a first read's derivation).
first_heads(M, P, S, A) :-
    % a slot whose facts were all erased keeps what was derived of it empty; a fact added
    % there after makes it stale as a new slot is: nothing of it may stay (the union of a
    % view read the old, empty front and let an older fact of the view stay a head)
    retractall(front(M, S, A, _)), clear_heads(M, S, A),
    retractall(holds(M, S, A, _)), retractall(kept_conflict(M, S, A)),
    live_records(M, S, A, Recs),
    newest_first(Recs, Sorted),
    frontier(Sorted, Front),
    assertz(front(M, S, A, Front)),
    front_index(Front, Index),
    assert_heads(Recs, Index, P, M, S, A, Ks),
    one_holds(Ks, In, Contested),                 % a frontier slot is no set
    ( Contested == true -> assertz(kept_conflict(M, S, A)) ; true ),
    forall(member(Y, In), assertz(holds(M, S, A, Y))).

% assert_heads(+Recs, +Index, +P, +M, +S, +A, -Keys): heads_by_frontier/4's heads asserted
% in one pass, with their value keys (Index: policies:front_index/2 of the frontier)
assert_heads([], _, _, _, _, _, []).
assert_heads([R|Rs], Index, P, M, S, A, Ks) :-
    (   front_dominated(P, Index, R)
    ->  Ks = Ks1
    ;   arg(1, R, Id), arg(2, R, K),
        assertz(kept_head(M, S, A, Id)),
        Ks = [K|Ks1]
    ),
    assert_heads(Rs, Index, P, M, S, A, Ks1).


%!  fresh_all(+M) is det.
%
%   fresh/3 of every stale slot (before a belief is evaluated, or a query over all
%   slots).
fresh_all(M) :-
    forall(stale(M, S, A), fresh(M, S, A)).

%!  recompute_slot(+M, +S, +A) is det.
%
%   Recompute the heads of one slot from its live facts (at the memory's clock for
%   a timed slot): a write changed them.
recompute_slot(M, S, A) :-
    touch(M),
    derive_slot(M, S, A).

% derive_slot(+M, +S, +A): the slot's heads, frontier, holds/4 and conflict from its live
% facts; the slot is no longer stale.
derive_slot(M, S, A) :-
    retractall(stale(M, S, A)),
    derive_heads(M, S, A).

derive_heads(M, S, A) :-
    timed(M, S, A),
    !,
    retractall(front(M, S, A, _)),
    once(store_now(M, Now)),
    heads_at(M, S, A, none, Now, Heads, Front),
    ( Front == none -> true ; assertz(front(M, S, A, Front)) ),   % insert_front/6 reads it
    set_heads(M, S, A, Heads).
derive_heads(M, S, A) :-
    retractall(front(M, S, A, _)),
    (   frontier_slot(M, S, A, P)
    ->  live_records(M, S, A, Recs),
        heads_by_frontier(P, Recs, Heads, Front),
        assertz(front(M, S, A, Front))
    ;   slot_live(M, S, A, Live),
        (   linked_monotone(M, S, A, P)
        ->  linked_heads(M, P, Live, Heads, Front),
            assertz(front(M, S, A, Front))       % chains:insert_linked/6 reads it
        ;   slot_heads_among(M, A, Live, Heads)
        )
    ),
    set_heads(M, S, A, Heads).

set_heads(M, S, A, Heads) :-
    clear_heads(M, S, A),
    forall(member(H, Heads), assertz(kept_head(M, S, A, H))),
    refresh_holds(M, S, A).

%!  heads_holds(+M, +A, +Heads, -Values) is det.
%
%   The values holds/3 yields for a slot of attribute A with these heads: its
%   value when they agree on one, none when they disagree or there are none; of
%   a set, each member whose chain is not contested.
heads_holds(M, A, Heads, Values) :-
    findall(K, ( member(H, Heads), fact(M, H, _, _, K, _, _, _, _, _) ), Ks),
    keys_holds(M, A, Ks, Values, _).

% keys_holds(+M, +A, +HeadKeys, -Values, -Contested): heads_holds/4 from the heads' value
% keys; Contested is true when they disagree (of a set: on a member's presence).
keys_holds(M, A, Ks0, Values, Contested) :-
    (   many_attr(M, A)
    ->  sort(Ks0, Ks),                            % m(V, 0) just before m(V, 1)
        members_holds(Ks, Values, false, Contested)
    ;   one_holds(Ks0, Values, Contested)
    ).

% one_holds(+Keys, -Values, -Contested): a single-valued slot's heads' keys
one_holds(Ks0, Values, Contested) :-
    sort(Ks0, Ks),
    (   Ks = [K] -> Values = [K], Contested = false
    ;   Ks == [] -> Values = [], Contested = false
    ;   Values = [], Contested = true
    ).

% refresh_holds(+M, +S, +A): bring holds/4 and conflict/3 of a slot in line with its
% heads (keys_holds/5). holds/4 is touched only when the resolved value changes, so
% tabled beliefs are not invalidated needlessly.
refresh_holds(M, S, A) :-
    findall(K, ( kept_head(M, S, A, H), fact(M, H, _, _, K, _, _, _, _, _) ), Ks),
    keys_holds(M, A, Ks, In, Contested),
    (   Contested == true
    ->  ( kept_conflict(M, S, A) -> true ; assertz(kept_conflict(M, S, A)) )
    ;   retractall(kept_conflict(M, S, A))
    ),
    (   many_attr(M, A)
    ->  findall(O, holds(M, S, A, O), Old0),
        sort(Old0, Old),                          % In is sorted too (members_holds/4)
        (   Old == In
        ->  true
        ;   ord_subtract(Old, In, Gone),
            ord_subtract(In, Old, Came),
            forall(member(X, Gone), retract(holds(M, S, A, X))),
            forall(member(Y, Came), assertz(holds(M, S, A, Y)))
        )
    ;   holds(M, S, A, Old)
    ->  (   In == [Old]
        ->  true
        ;   retractall(holds(M, S, A, _)),
            forall(member(Y, In), assertz(holds(M, S, A, Y)))
        )
    ;   forall(member(Y, In), assertz(holds(M, S, A, Y)))
    ).

%!  heads_at(+M, +S, +A, +KnownAt, +ValidAt, -Heads) is det.
%
%   The heads of a slot as the store knew it at transaction time KnownAt, at
%   valid time ValidAt: among the facts that had begun by ValidAt, those no
%   other dominates, less those that had ended by then. A fact that a newer one
%   dominates ends where the newer one begins; once that one ends, the slot has
%   no head (the older fact does not come back). Either time may be none.
heads_at(M, S, A, KnownAt, ValidAt, Heads) :-
    heads_at(M, S, A, KnownAt, ValidAt, Heads, _).

% heads_at(+M, +S, +A, +KnownAt, +ValidAt, -Heads, -Front): and the frontier of those
% facts under a monotone policy (with links or a confirmation: their chain front,
% chains:linked_heads/5; none under another policy), which a timed slot keeps
heads_at(M, S, A, KnownAt, ValidAt, Heads, Front) :-
    findall(Id, fact_at(M, S, A, KnownAt, ValidAt, Id), Ids),
    (   monotone_slot(M, S, A, P)
    ->  findall(R, ( member(Id, Ids), once(record(M, Id, R)) ), Recs),
        heads_by_frontier(P, Recs, Heads0, Front)
    ;   linked_monotone(M, S, A, P)
    ->  linked_heads(M, P, Ids, Heads0, Front)
    ;   slot_heads_among(M, A, Ids, Heads0),
        Front = none
    ),
    exclude(ended_at(M, KnownAt, ValidAt), Heads0, Heads).

% monotone_slot(+M, +S, +A, -Policy): heads follow from the slot's frontier (a monotone
% policy, no explicit links, not a set: a set's members are decided pairwise).
monotone_slot(M, S, A, P) :-
    once(mem_policy(M, P)),
    monotone(P),
    \+ linked(M, S, A),
    \+ many_attr(M, A).


%!  ended(+M, +Id, +Now) is semidet.
%
%   The fact's valid_to is at or before Now.
ended(M, Id, Now) :-
    ended_at(M, none, Now, Id).
