package zmtp

import (
	"testing"
	"time"
)

// A message from bigMessage up starts a release, at most one per
// releaseEvery; smaller ones never do.
func TestABigMessageHandsItsMemoryBack(t *testing.T) {
	waitReleased(t)
	lastRelease.Store(0)
	written(bigMessage - 1)
	if lastRelease.Load() != 0 {
		t.Fatal("a message below bigMessage started a release")
	}
	written(bigMessage)
	first := lastRelease.Load()
	if first == 0 {
		t.Fatal("a message of bigMessage started no release")
	}
	written(bigMessage)
	if lastRelease.Load() != first {
		t.Error("a second big message within releaseEvery started another release")
	}
	waitReleased(t)
}

// waitReleased waits for a release under way (from this test or the 50 MB
// ones) to end.
func waitReleased(t *testing.T) {
	for deadline := time.Now().Add(10 * time.Second); releasing.Load(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a release did not end in 10 s")
		}
	}
}
