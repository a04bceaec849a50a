package proctree

import (
	"errors"
	"testing"
)

func TestPSSOfAPrivateHog(t *testing.T) {
	hog := startHog(t, hogMiB)
	pss, err := PSS(hog.pid())
	if err != nil {
		t.Fatal(err)
	}
	// Its anonymous pages are its own, so they count in full; shared
	// libraries count in part, so PSS stays at or below RSS.
	if rss := vmRSS(t, hog.pid()); pss < hogMiB<<20 || pss > rss {
		t.Errorf("PSS = %d, want between %d and RSS %d", pss, hogMiB<<20, rss)
	}
}

func TestPSSOfAGoneProcess(t *testing.T) {
	if _, err := PSS(exitedPID(t)); !errors.Is(err, ErrGone) {
		t.Errorf("PSS of a gone process: %v, want ErrGone", err)
	}
}

func TestPSSOfAZombie(t *testing.T) {
	if _, err := PSS(zombiePID(t)); !errors.Is(err, ErrGone) {
		t.Errorf("PSS of a zombie: %v, want ErrGone", err)
	}
}
