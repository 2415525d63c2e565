package core

import (
	"fmt"
	"testing"
)

func TestRecentCalls(t *testing.T) {
	for _, n := range []int{0, 1, RecentCallsKept, RecentCallsKept + 57} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			c := New(Config{})
			for i := range n {
				c.Record(CallInfo{Dialect: "tencent", Action: fmt.Sprintf("A%d", i)})
			}
			got := c.RecentCalls()
			want := min(n, RecentCallsKept)
			if len(got) != want {
				t.Fatalf("kept %d calls, want %d", len(got), want)
			}
			for i, rc := range got { // oldest first: the last `want` actions in order
				if w := fmt.Sprintf("A%d", n-want+i); rc.Action != w || rc.Code != CodeOK {
					t.Fatalf("call %d = %s %s, want %s OK", i, rc.Action, rc.Code, w)
				}
			}
			c.ResetCalls()
			if got := c.RecentCalls(); len(got) != 0 {
				t.Fatalf("after ResetCalls: %d recent calls, want 0", len(got))
			}
		})
	}
}
