//go:build race

package main

// raceEnabled: the tests run with -race, and so does the hoard binary they
// build, so the worker's pipeline is checked for races too.
const raceEnabled = true
