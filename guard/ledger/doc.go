// Package ledger keeps the memory story of each notebook cell: when it was
// asked for, started and finished, the kernel's memory at its start, its
// peak and its end, how much it added and how fast. Cells are keyed on the
// execute_request's msg_id, never on a busy flag: control requests and
// requests aborted after an error publish busy and idle too.
//
// The ledger is bounded (the last Capacity cells) and is not safe for
// concurrent use: its owner serialises calls.
package ledger
