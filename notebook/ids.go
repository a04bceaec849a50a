package notebook

import (
	"crypto/rand"
	"encoding/hex"
)

// repairIDs gives every cell a unique id, as nbformat's validate does for
// nbformat 4.5 and later: a missing or already used id is replaced.
func repairIDs(cells []*Cell) {
	seen := map[string]bool{}
	for _, c := range cells {
		if c.ID == "" || seen[c.ID] {
			c.ID = newCellID()
		}
		seen[c.ID] = true
	}
}

// newCellID returns a fresh cell id shaped like nbformat's: 8 random hex
// digits.
func newCellID() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // documented never to return an error
	return hex.EncodeToString(b[:])
}
