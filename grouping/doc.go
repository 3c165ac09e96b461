// Package grouping decides which packages of one channel belong together.
//
// It is pure: it works on plain structs, touches no database and imports only
// the standard library. The caller (the grouping job) loads one channel's
// packages, groups and learned rules into an [Input], calls [Compute] and
// applies the returned [Plan] in one transaction: it creates the new groups,
// moves the joining packages into existing groups and raises one
// GROUPING_CONFLICT notification per [Conflict].
//
// # Passes
//
// The passes run in this order; each one only sees the packages that are
// still ungrouped after the earlier ones, so an earlier pass wins a package
// that matches several signals. The order lives in one place, the passes
// slice in grouping.go.
//
//  1. Album (ALBUM) — always, even when AutoGroupEnabled is false: the platform
//     itself says these files were posted together.
//  2. Learned rules — the user's own decisions (SPEC: first automatic pass
//     after albums). A package joins the group that taught the rule.
//  3. Reply chain (AUTO_REPLY) — an explicit act of the poster: replying to a
//     message ties the archive to it.
//  4. Caption (AUTO_CAPTION) — the same normalised caption on several posts is
//     a deliberate, post-specific label; generic captions ("New release!",
//     "Enjoy") have no key.
//  5. ZIP path prefix (AUTO_ZIP) — the same dominant root folder inside the
//     archives means the same project split over several files; generic
//     folders ("STL/", "files/", "Supported STL/") do not count.
//  6. Time window (AUTO_TIME) — posts close in time (by their source post time,
//     never by indexing time) form a session of the channel; a group is one
//     release of it: the posts of one creator, and where one creator's burst
//     carries several file-name months (a reposted backlog), of one month.
//     Interleaved forum topics and reposted creators never share a group
//     because of the time alone.
//  7. Pattern (AUTO_PATTERN) — a date or project prefix taken from file names,
//     per creator: it gathers a month or project posted over several sessions.
//  8. Design (AUTO_PATTERN) — variants of one design (supported /
//     unsupported / pre-supported, 32mm / 75mm, v1 / v2, remix; see
//     [VariantLabel]) and re-uploads stay together: a package joins the
//     automatic group that holds its design from the same creator, however
//     late it came, or forms a group with its other variants.
//  9. Creator (AUTO_CREATOR) — the broadest signal, the lowest priority (SPEC).
//
// Every signal after the learned rules is scoped by creator (a forum's topics
// are its creators): only signals about the posts themselves — album, reply
// chain, learned rule — put packages of two creators in one group. Generic
// name prefixes ("STL", "files", "New") neither name a group, form a
// pattern, nor make a learned rule.
//
// The order is "most deliberate and most specific first, coincidence-prone and
// broad last": a broad signal that ran early would swallow packages a more
// precise signal would have grouped more finely. The time window runs before
// the file-name pattern because a creator's release is the unit a collector
// keeps: a pattern that ran first would split a release into its designs
// ("Wyvern Rider - Supported", "- Unsupported" apart from the rest of the
// month's models); what the release leaves, the pattern and design passes
// gather across sessions.
//
// # Growing groups
//
// Without [Input.Reevaluate] (the job always sets it; see Determinism),
// every pass first looks for an existing group of its own source whose key
// equals the package's key (an album id, a pattern, a reply root, ...); a match
// joins that group, even a single package. Only packages without such a group
// form new groups, and then only with the pass's minimum member count. Time
// window groups grow by membership instead of key: a package within the
// window of an existing AUTO_TIME group's member joins that group, and one
// that bridges two AUTO_TIME groups merges them into the older one, so that
// the groups do not depend on the order in which packages arrive. A package
// marked KeepUngrouped (a user took it out of a group) is never placed again.
//
// # Conflicts
//
// After the passes, every package of an existing group is checked against
// the learned rules. A package in group G that matches a rule of group H (or
// rules of two groups) is reported once per unordered pair of groups, never
// once per package. Packages of manual groups are never moved: they are
// authoritative (without Input.Reevaluate, no grouped package moves).
//
// # Determinism
//
// [Compute] sorts its input, so the same input in any order gives the same
// plan, and it names a new group from its first posted member (post time,
// then source message id), never from its lowest package id: ids follow the
// order in which packages happened to be indexed. Grown one package at a time
// the result depends on the arrival order, because a package once placed is
// not placed again — unless [Input.Reevaluate] is set: then the packages of
// automatic groups are grouped again with the ungrouped ones, and the plan
// continues, moves, renames and dissolves automatic groups so that they are
// exactly the groups of the catalog grouped at once, whatever the order of
// arrival (TestCorpusArrivalOrder). Manual groups are never touched. It runs
// in O(n log n) for n packages.
package grouping
