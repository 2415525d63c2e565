package core

import (
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// Instance is one simulated virtual machine. The JSON field names are those
// of seed files and of the admin API.
type Instance struct {
	ID        string            `json:"id"`                 // "ins-xxxxxxxx"; generated if empty
	Name      string            `json:"name"`               // defaults to the ID
	Type      string            `json:"type"`               // e.g. "S5.MEDIUM4" (the default)
	Zone      string            `json:"zone"`               // e.g. "ap-guangzhou-3"; defaults to "<region>-1"
	PrivateIP string            `json:"privateIP"`          // primary private IPv4; allocated from 10.0.0.0/8 if empty
	PublicIP  string            `json:"publicIP,omitempty"` // optional public IPv4
	VpcID     string            `json:"vpcID"`              // "vpc-xxxxxxxx"; defaults to DefaultVpcID
	SubnetID  string            `json:"subnetID,omitempty"` // "subnet-xxxxxxxx"; defaults to DefaultSubnetID
	State     string            `json:"state"`              // an InstanceState; RUNNING if empty
	Tags      map[string]string `json:"tags,omitempty"`

	// OCI attributes, read by the OCI dialect, so that one fleet serves both
	// dialects. All are optional. VpcID and SubnetID may also hold OCI VCN
	// and subnet OCIDs.
	OCID               string `json:"ocid,omitempty"`               // "ocid1.instance.oc1..<unique>"; generated if empty
	CompartmentID      string `json:"compartmentID,omitempty"`      // compartment OCID; empty: the OCI dialect's default compartment
	AvailabilityDomain string `json:"availabilityDomain,omitempty"` // empty: the OCI dialect's first availability domain
	FaultDomain        string `json:"faultDomain,omitempty"`        // empty: the OCI dialect's default (FAULT-DOMAIN-1)
	Shape              string `json:"shape,omitempty"`              // empty: the OCI dialect's default shape
	HostnameLabel      string `json:"hostnameLabel,omitempty"`      // the primary VNIC's hostname label; none if empty

	// Firewalls (see firewall.go). SecurityGroupIDs are the Tencent
	// security groups bound to the instance, in priority order; NSGIDs are
	// the OCI network security groups of its primary VNIC.
	SecurityGroupIDs []string `json:"securityGroupIds,omitempty"` // "sg-xxxxxxxx"
	NSGIDs           []string `json:"nsgIds,omitempty"`           // "ocid1.networksecuritygroup..."
}

// Defaults filled in by AddInstances.
const (
	DefaultInstanceType = "S5.MEDIUM4"
	DefaultVpcID        = "vpc-cloudsim"
	DefaultSubnetID     = "subnet-cloudsim"
	DefaultState        = StateRunning
)

// Instance states, as the Tencent CVM API names them (InstanceState).
const (
	StatePending      = "PENDING"
	StateLaunchFailed = "LAUNCH_FAILED"
	StateRunning      = "RUNNING"
	StateStopped      = "STOPPED"
	StateStarting     = "STARTING"
	StateStopping     = "STOPPING"
	StateRebooting    = "REBOOTING"
	StateShutdown     = "SHUTDOWN"
	StateTerminating  = "TERMINATING"
)

// States lists every valid instance state.
var States = []string{
	StatePending, StateLaunchFailed, StateRunning, StateStopped, StateStarting,
	StateStopping, StateRebooting, StateShutdown, StateTerminating,
}

// ErrNotFound is returned (wrapped) when an instance does not exist (or no
// longer exists because it finished terminating).
var ErrNotFound = errors.New("not found")

// ErrInvalid is returned (wrapped) for invalid input.
var ErrInvalid = errors.New("invalid input")

var (
	instanceIDRe = regexp.MustCompile(`^ins-[a-z0-9]{8}$`)
	vpcIDRe      = regexp.MustCompile(`^vpc-[a-z0-9]{8}$`)
	subnetIDRe   = regexp.MustCompile(`^subnet-[a-z0-9]{8}$`)
	zoneSuffixRe = regexp.MustCompile(`-[0-9]+$`)
)

// ValidInstanceID reports whether id has the real format "ins-" followed by 8
// lowercase letters or digits.
func ValidInstanceID(id string) bool { return instanceIDRe.MatchString(id) }

// ValidVpcID reports whether id has the format "vpc-" + 8 lowercase alnum.
func ValidVpcID(id string) bool { return vpcIDRe.MatchString(id) }

// ValidSubnetID reports whether id has the format "subnet-" + 8 lowercase alnum.
func ValidSubnetID(id string) bool { return subnetIDRe.MatchString(id) }

// StateAliases are other clouds' names for fleet states, accepted wherever
// a state is set (seed files, the admin API). OCI reports a TERMINATING
// instance as TERMINATING and then TERMINATED until it disappears.
var StateAliases = map[string]string{
	"PROVISIONING": StatePending,     // OCI
	"TERMINATED":   StateTerminating, // OCI
}

// NormalizeState upper-cases s, resolves StateAliases, and reports whether
// it is a known state.
func NormalizeState(s string) (string, bool) {
	u := strings.ToUpper(strings.TrimSpace(s))
	if a, ok := StateAliases[u]; ok {
		u = a
	}
	return u, slices.Contains(States, u)
}

// Record is an instance as the fleet holds it, with the attributes the cloud
// assigns (UUID, creation time) and its place in creation order.
type Record struct {
	Instance
	UUID       string
	Created    time.Time
	Seq        int64     // creation order, increasing
	Terminated time.Time // when it entered TERMINATING; zero otherwise
}

// Region is the region the instance lives in, derived from its zone
// ("ap-guangzhou-3" -> "ap-guangzhou"). A zone without a numeric suffix
// belongs to the simulator's default region.
func (r Record) Region(defaultRegion string) string {
	if loc := zoneSuffixRe.FindStringIndex(r.Zone); loc != nil && loc[0] > 0 {
		return r.Zone[:loc[0]]
	}
	return defaultRegion
}

// fleet is the set of instances. Callers hold Core.mu.
type fleet struct {
	// gone are called with each instance the linger drops (Core.OnInstanceGone).
	gone   []func(Record)
	byID   map[string]*Record
	byOCID map[string]*Record // OCI dialect lookups; kept in step with byID
	seq    int64
	nextIP uint32
}

// lookup finds an instance by its id or its OCID.
func (f *fleet) lookup(id string) *Record {
	if r := f.byID[id]; r != nil {
		return r
	}
	return f.byOCID[id]
}

func randomAlnum(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// NewUUID returns a random RFC 4122 version 4 UUID.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func parseIPv4(field, s string) (string, error) {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() {
		return "", fmt.Errorf("%w: %s %q is not a valid IPv4 address", ErrInvalid, field, s)
	}
	return a.String(), nil
}

// gc drops instances whose TERMINATING linger has passed.
func (f *fleet) gc(now time.Time, linger time.Duration) {
	if linger < 0 {
		return
	}
	for id, r := range f.byID {
		if r.State == StateTerminating && !now.Before(r.Terminated.Add(linger)) {
			delete(f.byID, id)
			delete(f.byOCID, r.OCID)
			for _, fn := range f.gone {
				out := *r
				out.Instance = r.Instance.clone()
				fn(out)
			}
		}
	}
}

func (f *fleet) sorted() []*Record {
	out := make([]*Record, 0, len(f.byID))
	for _, r := range f.byID {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

type ipKey struct{ vpc, ip string }

// add validates the batch as a whole and commits it only if every instance is
// valid.
func (f *fleet) add(now time.Time, region string, in []Instance) ([]Instance, error) {
	usedPriv := map[ipKey]string{}
	usedPub := map[string]string{}
	for _, r := range f.byID {
		usedPriv[ipKey{r.VpcID, r.PrivateIP}] = r.ID
		if r.PublicIP != "" {
			usedPub[r.PublicIP] = r.ID
		}
	}
	batchIDs := map[string]bool{}
	batchOCIDs := map[string]bool{}
	recs := make([]*Record, 0, len(in))
	for i, inst := range in {
		inst.Tags = maps.Clone(inst.Tags)
		where := fmt.Sprintf("instance %d", i)
		if inst.ID == "" {
			for {
				inst.ID = "ins-" + randomAlnum(8)
				if f.byID[inst.ID] == nil && !batchIDs[inst.ID] {
					break
				}
			}
		} else if !ValidInstanceID(inst.ID) {
			return nil, fmt.Errorf("%w: %s: id %q is malformed: want \"ins-\" followed by 8 lowercase letters or digits", ErrInvalid, where, inst.ID)
		}
		where = fmt.Sprintf("instance %d (%s)", i, inst.ID)
		if f.byID[inst.ID] != nil || batchIDs[inst.ID] {
			return nil, fmt.Errorf("%w: %s: id already exists", ErrInvalid, where)
		}
		batchIDs[inst.ID] = true
		if inst.Name == "" {
			inst.Name = inst.ID
		}
		if inst.Type == "" {
			inst.Type = DefaultInstanceType
		}
		if inst.Zone == "" {
			inst.Zone = region + "-1"
		}
		if inst.VpcID == "" {
			inst.VpcID = DefaultVpcID
		} else if !ValidVpcID(inst.VpcID) && !ValidOCID(inst.VpcID, "vcn") {
			return nil, fmt.Errorf("%w: %s: vpcID %q is malformed: want \"vpc-\" followed by 8 lowercase letters or digits (or an OCI VCN OCID)", ErrInvalid, where, inst.VpcID)
		}
		if inst.SubnetID == "" {
			inst.SubnetID = DefaultSubnetID
		} else if !ValidSubnetID(inst.SubnetID) && !ValidOCID(inst.SubnetID, "subnet") {
			return nil, fmt.Errorf("%w: %s: subnetID %q is malformed: want \"subnet-\" followed by 8 lowercase letters or digits (or an OCI subnet OCID)", ErrInvalid, where, inst.SubnetID)
		}
		if inst.OCID == "" {
			for {
				inst.OCID = NewOCID("instance")
				if f.byOCID[inst.OCID] == nil && !batchOCIDs[inst.OCID] {
					break
				}
			}
		} else if !ValidOCID(inst.OCID, "instance") {
			return nil, fmt.Errorf("%w: %s: ocid %q is malformed: want \"ocid1.instance.<realm>.[region].<unique id>\"", ErrInvalid, where, inst.OCID)
		}
		if f.byOCID[inst.OCID] != nil || batchOCIDs[inst.OCID] {
			return nil, fmt.Errorf("%w: %s: ocid %s already exists", ErrInvalid, where, inst.OCID)
		}
		batchOCIDs[inst.OCID] = true
		if inst.CompartmentID != "" && !ValidOCID(inst.CompartmentID, "compartment") && !ValidOCID(inst.CompartmentID, "tenancy") {
			return nil, fmt.Errorf("%w: %s: compartmentID %q is not a compartment or tenancy OCID", ErrInvalid, where, inst.CompartmentID)
		}
		if inst.State == "" {
			inst.State = DefaultState
		}
		st, ok := NormalizeState(inst.State)
		if !ok {
			return nil, fmt.Errorf("%w: %s: unknown state %q (valid: %s)", ErrInvalid, where, inst.State, strings.Join(States, ", "))
		}
		inst.State = st
		if err := checkFirewalls(&inst); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, where, err)
		}
		for k := range inst.Tags {
			if strings.TrimSpace(k) == "" {
				return nil, fmt.Errorf("%w: %s: empty tag key", ErrInvalid, where)
			}
		}
		if inst.PrivateIP == "" {
			inst.PrivateIP = f.allocIP(inst.VpcID, usedPriv)
		} else {
			ip, err := parseIPv4("privateIP", inst.PrivateIP)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			inst.PrivateIP = ip
		}
		if other, dup := usedPriv[ipKey{inst.VpcID, inst.PrivateIP}]; dup {
			return nil, fmt.Errorf("%w: %s: privateIP %s is already used by %s in %s", ErrInvalid, where, inst.PrivateIP, other, inst.VpcID)
		}
		usedPriv[ipKey{inst.VpcID, inst.PrivateIP}] = inst.ID
		if inst.PublicIP != "" {
			ip, err := parseIPv4("publicIP", inst.PublicIP)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			inst.PublicIP = ip
			if other, dup := usedPub[ip]; dup {
				return nil, fmt.Errorf("%w: %s: publicIP %s is already used by %s", ErrInvalid, where, ip, other)
			}
			usedPub[ip] = inst.ID
		}
		recs = append(recs, &Record{Instance: inst, UUID: NewUUID(), Created: now.UTC().Truncate(time.Second)})
	}
	out := make([]Instance, len(recs))
	for i, r := range recs {
		f.seq++
		r.Seq = f.seq
		if r.State == StateTerminating {
			r.Terminated = now
		}
		f.byID[r.ID] = r
		f.byOCID[r.OCID] = r
		out[i] = r.Instance.clone()
	}
	return out, nil
}

// allocIP returns the next free address of 10.0.0.0/8 in the VPC.
func (f *fleet) allocIP(vpc string, used map[ipKey]string) string {
	for {
		f.nextIP++
		n := f.nextIP%(1<<24-2) + 1 // never 10.0.0.0
		ip := fmt.Sprintf("10.%d.%d.%d", n>>16&255, n>>8&255, n&255)
		if n&255 == 0 || n&255 == 255 {
			continue
		}
		if _, taken := used[ipKey{vpc, ip}]; !taken {
			return ip
		}
	}
}

func (i Instance) clone() Instance {
	i.Tags = maps.Clone(i.Tags)
	i.SecurityGroupIDs = slices.Clone(i.SecurityGroupIDs)
	i.NSGIDs = slices.Clone(i.NSGIDs)
	return i
}
