package store

import (
	"regexp"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// A search statement's optional conditions are written `(@x::type IS NULL
// OR …)` (or `IS NOT TRUE OR`, `IS NOT FALSE OR` for a tri-state bool):
// true when the argument x is not bound. PostgreSQL folds such a condition
// when it plans the statement with its arguments, but it still parses and
// analyses all of it on every search, and the filters are written three
// times in some shapes: a whole statement cost 0.25 ms more to parse than
// the one spliced from the conditions in use (BenchmarkSearch, 1,000,000
// packages). So before a statement is sent, each optional condition of an
// argument the search leaves unbound is cut to TRUE: the text sent is the
// golden file's with those conditions replaced, which is exactly what the
// planner would have made of them. The cut is on text whose conditions
// were located once, at start (optionalTerms); it costs a copy of the
// statement.

// optionalTermStart finds the start of an optional condition, naming its
// argument.
var optionalTermStart = regexp.MustCompile(`\(@(\w+)::[\w\[\]]+ IS (?:NULL|NOT TRUE|NOT FALSE) OR `)

// An optional branch is a parenthesised query after UNION ALL that opens
// with a comment naming its argument, `UNION ALL (/*if @x*/SELECT …)`:
// it reads rows only when x is bound (a lexeme of a word_window), and
// where x is unbound it is cut whole. PostgreSQL would plan it as a
// relation that returns nothing, but it spent about 0.1 ms planning each
// (EXPLAIN in psql on the 1,000,000-package catalog: two windows of 32
// branches, all but one a side unbound, planned in 8 ms), and a pair's
// window has twenty-three.
var optionalBranchStart = regexp.MustCompile(`\s*UNION ALL (\()/\*if @(\w+)\*/`)

// optionalTerm is one optional condition or branch of a statement:
// text[start:end] is replaced by cut when arg is unbound.
type optionalTerm struct {
	start, end int
	arg        string
	cut        string // "TRUE" for a condition, "" for a branch
}

// searchStatement is a search shape's whole statement with its optional
// conditions located.
type searchStatement struct {
	sql   string
	terms []optionalTerm
}

// newSearchStatement locates the optional conditions and branches of sql;
// it panics on one whose parentheses do not close, which a test run finds.
func newSearchStatement(name, sql string) searchStatement {
	st := searchStatement{sql: sql}
	for _, m := range optionalTermStart.FindAllStringSubmatchIndex(sql, -1) {
		st.terms = append(st.terms, optionalTerm{start: m[0], end: closingOf(name, sql, m[0]), arg: sql[m[2]:m[3]], cut: "TRUE"})
	}
	for _, m := range optionalBranchStart.FindAllStringSubmatchIndex(sql, -1) {
		st.terms = append(st.terms, optionalTerm{start: m[0], end: closingOf(name, sql, m[2]), arg: sql[m[4]:m[5]]})
	}
	slices.SortFunc(st.terms, func(a, b optionalTerm) int { return a.start - b.start })
	return st
}

// closingOf is the index just after the parenthesis that closes the one at
// open in the statement name's sql; it panics when none does, which a
// test run finds.
func closingOf(name, sql string, open int) int {
	end := closingParen(sql, open)
	if end < 0 {
		panic("search statement " + name + ": unbalanced optional term at " + sql[open:min(len(sql), open+60)])
	}
	return end + 1
}

// closingParen is the index of the parenthesis that closes the one at
// open, skipping quoted strings; -1 when there is none.
func closingParen(sql string, open int) int {
	depth, quoted := 0, false
	for i := open; i < len(sql); i++ {
		switch c := sql[i]; {
		case c == '\'':
			quoted = !quoted
		case quoted:
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// text is the statement to send with args: every optional condition of an
// argument that args leaves out (or binds to nil) cut to TRUE, every such
// optional branch cut. Terms inside a cut one go with it.
func (st searchStatement) text(args pgx.NamedArgs) string {
	var b strings.Builder
	pos := 0
	for _, t := range st.terms {
		if t.start < pos || (args[t.arg] != nil) {
			continue
		}
		if b.Len() == 0 {
			b.Grow(len(st.sql))
		}
		b.WriteString(st.sql[pos:t.start])
		b.WriteString(t.cut)
		pos = t.end
	}
	if pos == 0 {
		return st.sql
	}
	b.WriteString(st.sql[pos:])
	return b.String()
}
