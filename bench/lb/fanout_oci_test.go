package lb

import "testing"

// The OCI fan-out floor: the writes through a 20/s, burst-5 bucket, then
// the last load balancer's work requests.
func TestOCIFanoutFloor(t *testing.T) {
	for _, c := range []struct {
		name                           string
		writes, perLB                  int
		workRequest                    float64
		floor, writeRate, workRequest2 float64
	}{
		{"issue size: 100 one-backend-set LBs", 100, 1, 0.3, 5.05, 4.75, 0.3},
		{"within the burst: work request only", 5, 1, 0.3, 0.3, 0, 0.3},
		{"two backend sets per LB: serial work requests", 200, 2, 0.3, 10.35, 9.75, 0.6},
	} {
		floor, rate, wr := ociFanoutFloor(c.writes, c.perLB, c.workRequest)
		if floor != c.floor || rate != c.writeRate || wr != c.workRequest2 {
			t.Errorf("%s: floor %v (writes %v + work requests %v), want %v (%v + %v)", c.name, floor, rate, wr, c.floor, c.writeRate, c.workRequest2)
		}
	}
}
