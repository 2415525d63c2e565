package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestDeal(t *testing.T) {
	w := map[string]time.Duration{"TestA": 400 * time.Second, "TestB": 100 * time.Second, "TestC": 90 * time.Second,
		"TestD": 80 * time.Second, "TestE": 70 * time.Second}
	for _, tt := range []struct {
		name   string
		tests  []string
		n      int
		shards [][]string
	}{
		{"longest alone", []string{"TestA", "TestB", "TestC", "TestD", "TestE"}, 2,
			[][]string{{"TestA"}, {"TestB", "TestC", "TestD", "TestE"}}},
		{"one shard", []string{"TestB", "TestA"}, 1, [][]string{{"TestA", "TestB"}}},
		{"more shards than tests", []string{"TestB"}, 3, [][]string{{"TestB"}}},
		{"unknown tests weigh 20s", []string{"TestX", "TestY", "TestZ", "TestC"}, 2,
			[][]string{{"TestC"}, {"TestX", "TestY", "TestZ"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			plan := deal(tt.tests, w, tt.n)
			var got [][]string
			for _, p := range plan {
				got = append(got, p.tests)
			}
			if !slices.EqualFunc(got, tt.shards, slices.Equal) {
				t.Errorf("deal = %v, want %v", got, tt.shards)
			}
		})
	}
}

func TestIsTestName(t *testing.T) {
	for name, want := range map[string]bool{"TestNode": true, "Test": true, "Test_x": true, "TestMain": false,
		"Testing": false, "helper": false} {
		if got := isTestName(name); got != want {
			t.Errorf("isTestName(%q) = %v", name, got)
		}
	}
}

func TestOutcomesAndDurations(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "shard.log")
	if err := os.WriteFile(log, []byte("=== RUN   TestA\n--- PASS: TestA (12.50s)\n    --- FAIL: TestB/sub (1.00s)\n"+
		"--- FAIL: TestB (3.00s)\nFAIL\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	failed, passed := outcomes(log)
	if !slices.Equal(failed, []string{"TestB"}) || passed["TestA"] != 12500*time.Millisecond || len(passed) != 1 {
		t.Fatalf("outcomes = %v, %v", failed, passed)
	}
	path := filepath.Join(dir, "durations.txt")
	if err := recordDurations(path, map[string]time.Duration{"TestA": time.Second, "TestC": 7 * time.Second},
		[]result{{passed: passed}}); err != nil {
		t.Fatal(err)
	}
	got, err := readDurations(path)
	if err != nil {
		t.Fatal(err)
	}
	if got["TestA"] != 12500*time.Millisecond || got["TestC"] != 7*time.Second || len(got) != 2 {
		t.Errorf("durations = %v", got)
	}
	if err := os.WriteFile(path, []byte("TestA twelve\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readDurations(path); err == nil {
		t.Error("a malformed line was accepted")
	}
}

func TestListTestsFollowsBuildTags(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"a_test.go":    "//go:build e2e\n\npackage e2e\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\nfunc TestMain(m *testing.M) {}\nfunc helper(t *testing.T) {}\n",
		"soak_test.go": "//go:build e2e && soak\n\npackage e2e\n\nimport \"testing\"\n\nfunc TestSoak(t *testing.T) {}\n",
		"b_test.go":    "package e2e\n\nimport \"testing\"\n\nfunc TestB(t *testing.T) {}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := listTests(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"TestA", "TestB"}; !slices.Equal(got, want) {
		t.Errorf("listTests = %v, want %v", got, want)
	}
}
