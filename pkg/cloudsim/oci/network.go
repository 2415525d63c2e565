package oci

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ocicore "github.com/oracle/oci-go-sdk/v65/core"
	"github.com/oracle/oci-go-sdk/v65/identity"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// The network that exists before anything is seeded. An instance whose
// VpcID or SubnetID is not an OCI OCID (every Tencent-style instance) is
// placed in DefaultVCNID / DefaultSubnetID.
const (
	DefaultCompartmentID  = "ocid1.compartment.oc1..aaaaaaaacloudsim"
	DefaultVCNID          = "ocid1.vcn.oc1..aaaaaaaacloudsim"
	DefaultSubnetID       = "ocid1.subnet.oc1..aaaaaaaacloudsim"
	DefaultSecurityListID = "ocid1.securitylist.oc1..aaaaaaaacloudsim"
	DefaultVCNCIDR        = "10.0.0.0/16" // the core fleet allocates private IPs from 10.0.0.1 up
	DefaultShape          = "VM.Standard.E4.Flex"
	DefaultFaultDomain    = "FAULT-DOMAIN-1"
	// MaxSecurityRules is OCI's limit of ingress (and of egress) rules per
	// security list.
	MaxSecurityRules = 200
	// MaxSecurityListsPerSubnet: see seed.
	MaxSecurityListsPerSubnet = 5
)

// NetworkSeed adds compartments, availability domains, VCNs, subnets and
// security lists. Entries whose id exists replace it. A seed is applied
// entirely or not at all.
type NetworkSeed struct {
	// DefaultCompartment, if set, replaces DefaultCompartmentID as the
	// compartment of instances, VCNs and subnets that name none.
	DefaultCompartment string `json:"defaultCompartment,omitempty"`
	// Compartments are compartment OCIDs that exist (the default one and
	// the callers' tenancies always do).
	Compartments []string `json:"compartments,omitempty"`
	// AvailabilityDomains, if set, replace the availability domains
	// (default "<prefix>:<REGION>-AD-1" to -3).
	AvailabilityDomains []string       `json:"availabilityDomains,omitempty"`
	VCNs                []VCN          `json:"vcns,omitempty"`
	SecurityLists       []SecurityList `json:"securityLists,omitempty"`
	Subnets             []Subnet       `json:"subnets,omitempty"`
	// NetworkSecurityGroups are added with their rules (nsg.go).
	NetworkSecurityGroups []NSG `json:"networkSecurityGroups,omitempty"`
}

// VCN is a virtual cloud network.
type VCN struct {
	ID            string `json:"id,omitempty"`            // generated if empty
	CompartmentID string `json:"compartmentId,omitempty"` // default: the default compartment
	DisplayName   string `json:"displayName,omitempty"`
	CIDRBlock     string `json:"cidrBlock,omitempty"` // default DefaultVCNCIDR
	DNSLabel      string `json:"dnsLabel,omitempty"`
	// DefaultSecurityListID is the VCN's default security list; one that
	// allows SSH in and everything out is created when empty.
	DefaultSecurityListID string `json:"defaultSecurityListId,omitempty"`
}

// Subnet is a subnet of a VCN.
type Subnet struct {
	ID                     string   `json:"id,omitempty"`            // generated if empty
	VCNID                  string   `json:"vcnId,omitempty"`         // default DefaultVCNID
	CompartmentID          string   `json:"compartmentId,omitempty"` // default: the VCN's
	DisplayName            string   `json:"displayName,omitempty"`
	CIDRBlock              string   `json:"cidrBlock,omitempty"`          // default: the VCN's CIDR; must be inside it
	AvailabilityDomain     string   `json:"availabilityDomain,omitempty"` // empty: a regional subnet
	DNSLabel               string   `json:"dnsLabel,omitempty"`
	SecurityListIDs        []string `json:"securityListIds,omitempty"` // default: the VCN's default security list
	ProhibitPublicIPOnVNIC bool     `json:"prohibitPublicIpOnVnic,omitempty"`
	// IPv6CIDRBlocks make the subnet IPv6-enabled: /64 prefixes (ipv6.go).
	IPv6CIDRBlocks []string `json:"ipv6CidrBlocks,omitempty"`
}

// SecurityList is a VCN security list, with rules in the SDK's types.
type SecurityList struct {
	ID                   string                        `json:"id,omitempty"`    // generated if empty
	VCNID                string                        `json:"vcnId,omitempty"` // default DefaultVCNID
	CompartmentID        string                        `json:"compartmentId,omitempty"`
	DisplayName          string                        `json:"displayName,omitempty"`
	IngressSecurityRules []ocicore.IngressSecurityRule `json:"ingressSecurityRules"`
	EgressSecurityRules  []ocicore.EgressSecurityRule  `json:"egressSecurityRules"`
	// Etag changes with every update (read-only in seeds).
	Etag string `json:"etag,omitempty"`
}

// NetworkState is the whole network, as the admin API shows it.
type NetworkState struct {
	DefaultCompartment  string         `json:"defaultCompartment"`
	Compartments        []string       `json:"compartments"`
	AvailabilityDomains []string       `json:"availabilityDomains"`
	VCNs                []VCN          `json:"vcns"`
	SecurityLists       []SecurityList `json:"securityLists"`
	Subnets             []Subnet       `json:"subnets"`
	// NetworkSecurityGroups, with their rules.
	NetworkSecurityGroups []NSG `json:"networkSecurityGroups"`
}

type vcnRec struct {
	VCN
	created time.Time
}

type subnetRec struct {
	Subnet
	created time.Time
}

type secListRec struct {
	SecurityList
	created time.Time
	version int
}

// network is the VirtualNetwork state. It is safe for concurrent use.
type network struct {
	mu           sync.Mutex
	region       string
	defaultComp  string
	compartments map[string]bool
	ads          []string
	vcns         map[string]*vcnRec
	subnets      map[string]*subnetRec
	secLists     map[string]*secListRec
}

func newNetwork(region string) *network {
	n := &network{
		region:       region,
		defaultComp:  DefaultCompartmentID,
		compartments: map[string]bool{DefaultCompartmentID: true},
		vcns:         map[string]*vcnRec{},
		subnets:      map[string]*subnetRec{},
		secLists:     map[string]*secListRec{},
	}
	// Real AD names carry a tenancy-specific prefix ("Uocm:PHX-AD-1").
	area := strings.ToUpper(region)
	if i := strings.LastIndexByte(area, '-'); i > 0 {
		area = area[:i]
	}
	for i := 1; i <= 3; i++ {
		n.ads = append(n.ads, fmt.Sprintf("cSim:%s-AD-%d", area, i))
	}
	now := time.Now().UTC().Truncate(time.Second)
	n.secLists[DefaultSecurityListID] = &secListRec{SecurityList: defaultSecurityList(DefaultSecurityListID, DefaultVCNID, DefaultCompartmentID, "Default Security List for cloudsim"), created: now, version: 1}
	n.vcns[DefaultVCNID] = &vcnRec{VCN: VCN{ID: DefaultVCNID, CompartmentID: DefaultCompartmentID, DisplayName: "cloudsim", CIDRBlock: DefaultVCNCIDR, DNSLabel: "cloudsim", DefaultSecurityListID: DefaultSecurityListID}, created: now}
	n.subnets[DefaultSubnetID] = &subnetRec{Subnet: Subnet{ID: DefaultSubnetID, VCNID: DefaultVCNID, CompartmentID: DefaultCompartmentID, DisplayName: "cloudsim", CIDRBlock: DefaultVCNCIDR, DNSLabel: "nodes", SecurityListIDs: []string{DefaultSecurityListID}}, created: now}
	return n
}

// defaultSecurityList is what OCI gives a new VCN: SSH in, everything out.
func defaultSecurityList(id, vcnID, comp, name string) SecurityList {
	return SecurityList{
		ID: id, VCNID: vcnID, CompartmentID: comp, DisplayName: name,
		IngressSecurityRules: []ocicore.IngressSecurityRule{{
			Protocol: common.String("6"), Source: common.String("0.0.0.0/0"),
			SourceType: ocicore.IngressSecurityRuleSourceTypeCidrBlock, IsStateless: common.Bool(false),
			TcpOptions: &ocicore.TcpOptions{DestinationPortRange: &ocicore.PortRange{Min: common.Int(22), Max: common.Int(22)}},
		}},
		EgressSecurityRules: []ocicore.EgressSecurityRule{{
			Protocol: common.String("all"), Destination: common.String("0.0.0.0/0"),
			DestinationType: ocicore.EgressSecurityRuleDestinationTypeCidrBlock, IsStateless: common.Bool(false),
		}},
	}
}

// seed applies s all or nothing.
func (n *network) seed(s NetworkSeed) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	defComp := n.defaultComp
	if s.DefaultCompartment != "" {
		if !validCompartment(s.DefaultCompartment) {
			return fmt.Errorf("%w: defaultCompartment %q is not a compartment or tenancy OCID", core.ErrInvalid, s.DefaultCompartment)
		}
		defComp = s.DefaultCompartment
	}
	comps := maps.Clone(n.compartments)
	comps[defComp] = true
	for _, c := range s.Compartments {
		if !validCompartment(c) {
			return fmt.Errorf("%w: compartment %q is not a compartment or tenancy OCID", core.ErrInvalid, c)
		}
		comps[c] = true
	}
	ads := n.ads
	if len(s.AvailabilityDomains) > 0 {
		ads = slices.Clone(s.AvailabilityDomains)
		for _, ad := range ads {
			if strings.TrimSpace(ad) == "" {
				return fmt.Errorf("%w: an availability domain name is empty", core.ErrInvalid)
			}
		}
	}
	vcns, subnets, secLists := maps.Clone(n.vcns), maps.Clone(n.subnets), maps.Clone(n.secLists)
	now := time.Now().UTC().Truncate(time.Second)
	compOf := func(c string) (string, error) {
		if c == "" {
			return defComp, nil
		}
		if !validCompartment(c) {
			return "", fmt.Errorf("compartmentId %q is not a compartment or tenancy OCID", c)
		}
		comps[c] = true
		return c, nil
	}
	// inVCN resolves the VCN a seeded security list or subnet is in
	// (default DefaultVCNID) and its compartment (default the VCN's).
	inVCN := func(where string, vcnID, comp *string) (*vcnRec, error) {
		if *vcnID == "" {
			*vcnID = DefaultVCNID
		}
		vcn := vcns[*vcnID]
		if vcn == nil {
			return nil, fmt.Errorf("%w: %s: vcnId %s does not exist", core.ErrInvalid, where, *vcnID)
		}
		if *comp == "" {
			*comp = vcn.CompartmentID
		}
		var err error
		if *comp, err = compOf(*comp); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", core.ErrInvalid, where, err)
		}
		return vcn, nil
	}
	for i, v := range s.VCNs {
		where := fmt.Sprintf("vcns[%d]", i)
		var err error
		if v.ID, err = seedID(where, "vcn", "VCN", v.ID); err != nil {
			return err
		}
		if v.CompartmentID, err = compOf(v.CompartmentID); err != nil {
			return fmt.Errorf("%w: %s: %v", core.ErrInvalid, where, err)
		}
		if v.CIDRBlock == "" {
			v.CIDRBlock = DefaultVCNCIDR
		}
		p, err := netip.ParsePrefix(v.CIDRBlock)
		if err != nil || !p.Addr().Is4() || p.Bits() < 16 || p.Bits() > 30 || p.Masked() != p {
			return fmt.Errorf("%w: %s: cidrBlock %q must be an IPv4 network from /16 to /30", core.ErrInvalid, where, v.CIDRBlock)
		}
		if v.DisplayName == "" {
			v.DisplayName = v.ID
		}
		if v.DefaultSecurityListID == "" {
			if old := vcns[v.ID]; old != nil {
				v.DefaultSecurityListID = old.DefaultSecurityListID
			} else {
				v.DefaultSecurityListID = core.NewOCID("securitylist")
				secLists[v.DefaultSecurityListID] = &secListRec{SecurityList: defaultSecurityList(v.DefaultSecurityListID, v.ID, v.CompartmentID, "Default Security List for "+v.DisplayName), created: now, version: 1}
			}
		}
		vcns[v.ID] = &vcnRec{VCN: v, created: now}
	}
	for i, sl := range s.SecurityLists {
		where := fmt.Sprintf("securityLists[%d]", i)
		var err error
		if sl.ID, err = seedID(where, "securitylist", "security list", sl.ID); err != nil {
			return err
		}
		if _, err = inVCN(where, &sl.VCNID, &sl.CompartmentID); err != nil {
			return err
		}
		if sl.DisplayName == "" {
			sl.DisplayName = sl.ID
		}
		if e := validateRules(sl.IngressSecurityRules, sl.EgressSecurityRules); e != nil {
			return fmt.Errorf("%w: %s: %s", core.ErrInvalid, where, e.Message)
		}
		sl.Etag = ""
		version := 1
		if old := secLists[sl.ID]; old != nil {
			version = old.version + 1
		}
		secLists[sl.ID] = &secListRec{SecurityList: sl, created: now, version: version}
	}
	for i, sn := range s.Subnets {
		where := fmt.Sprintf("subnets[%d]", i)
		var err error
		if sn.ID, err = seedID(where, "subnet", "subnet", sn.ID); err != nil {
			return err
		}
		vcn, err := inVCN(where, &sn.VCNID, &sn.CompartmentID)
		if err != nil {
			return err
		}
		if sn.CIDRBlock == "" {
			sn.CIDRBlock = vcn.CIDRBlock
		}
		sp, err := netip.ParsePrefix(sn.CIDRBlock)
		vp := netip.MustParsePrefix(vcn.CIDRBlock)
		if err != nil || !sp.Addr().Is4() || sp.Masked() != sp || sp.Bits() < vp.Bits() || !vp.Contains(sp.Addr()) {
			return fmt.Errorf("%w: %s: cidrBlock %q must be an IPv4 network inside the VCN's %s", core.ErrInvalid, where, sn.CIDRBlock, vcn.CIDRBlock)
		}
		var msg string
		if sn.IPv6CIDRBlocks, msg = checkSubnetIPv6(sn.IPv6CIDRBlocks); msg != "" {
			return fmt.Errorf("%w: %s: %s", core.ErrInvalid, where, msg)
		}
		if sn.AvailabilityDomain != "" && !slices.Contains(ads, sn.AvailabilityDomain) {
			return fmt.Errorf("%w: %s: availabilityDomain %q is not one of %v", core.ErrInvalid, where, sn.AvailabilityDomain, ads)
		}
		if len(sn.SecurityListIDs) == 0 {
			sn.SecurityListIDs = []string{vcn.DefaultSecurityListID}
		}
		// "A subnet can be associated with a maximum of five security
		// lists" (https://docs.oracle.com/en-us/iaas/Content/Network/Concepts/securityrules.htm).
		if len(sn.SecurityListIDs) > MaxSecurityListsPerSubnet {
			return fmt.Errorf("%w: %s: %d security lists; a subnet has at most %d", core.ErrInvalid, where, len(sn.SecurityListIDs), MaxSecurityListsPerSubnet)
		}
		for _, id := range sn.SecurityListIDs {
			if sl := secLists[id]; sl == nil || sl.VCNID != sn.VCNID {
				return fmt.Errorf("%w: %s: security list %s does not exist in VCN %s", core.ErrInvalid, where, id, sn.VCNID)
			}
		}
		if sn.DisplayName == "" {
			sn.DisplayName = sn.ID
		}
		subnets[sn.ID] = &subnetRec{Subnet: sn, created: now}
	}
	n.defaultComp, n.compartments, n.ads = defComp, comps, ads
	n.vcns, n.subnets, n.secLists = vcns, subnets, secLists
	return nil
}

// seedID is a seeded resource's id: one made for it when empty, else
// checked to be an OCID of resourceType (what names that in errors).
func seedID(where, resourceType, what, id string) (string, error) {
	if id == "" {
		return core.NewOCID(resourceType), nil
	}
	if !core.ValidOCID(id, resourceType) {
		return "", fmt.Errorf("%w: %s: id %q is not a %s OCID", core.ErrInvalid, where, id, what)
	}
	return id, nil
}

func validCompartment(id string) bool {
	return core.ValidOCID(id, "compartment") || core.ValidOCID(id, "tenancy")
}

func (n *network) availabilityDomains() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.ads)
}

// state returns the whole network, sorted by id.
func (n *network) state() NetworkState {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := NetworkState{DefaultCompartment: n.defaultComp, AvailabilityDomains: slices.Clone(n.ads), Compartments: slices.Sorted(maps.Keys(n.compartments))}
	out.VCNs = []VCN{}
	for _, id := range slices.Sorted(maps.Keys(n.vcns)) {
		out.VCNs = append(out.VCNs, n.vcns[id].VCN)
	}
	out.SecurityLists = []SecurityList{}
	for _, id := range slices.Sorted(maps.Keys(n.secLists)) {
		sl := n.secLists[id]
		v := sl.SecurityList
		v.Etag = etag(sl.ID, sl.version)
		out.SecurityLists = append(out.SecurityLists, v)
	}
	out.Subnets = []Subnet{}
	for _, id := range slices.Sorted(maps.Keys(n.subnets)) {
		out.Subnets = append(out.Subnets, n.subnets[id].Subnet)
	}
	return out
}

func (n *network) subnet(id string) (Subnet, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.subnets[id]
	if s == nil {
		return Subnet{}, false
	}
	return s.Subnet, true
}

// stableOCID derives an OCID from a name, for resources that cloudsim
// does not store but must always answer with the same id.
func stableOCID(resourceType, name string) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz234567"
	sum := sha256.Sum256([]byte(resourceType + "/" + name))
	b := make([]byte, 52)
	for i := range b {
		b[i] = alphabet[sum[i%len(sum)]>>3^byte(i)&31]
	}
	return "ocid1." + resourceType + ".oc1..aaaaaaaa" + string(b)
}

// etag is an opaque entity tag that changes with the version.
func etag(id string, version int) string {
	sum := sha256.Sum256([]byte(id + "#" + strconv.Itoa(version)))
	return hex.EncodeToString(sum[:16])
}

// knownCompartment reports whether a compartment exists for the caller:
// its tenancy (the root compartment), a seeded one, or one an instance,
// VCN or subnet lives in.
func (d *Dialect) knownCompartment(c *call, id string) bool {
	if id == c.tenancy {
		return true
	}
	d.net.mu.Lock()
	known := d.net.compartments[id]
	d.net.mu.Unlock()
	if known {
		return true
	}
	for _, r := range d.core.Snapshot() {
		if r.CompartmentID == id {
			return true
		}
	}
	return false
}

// compartmentParam reads the required compartmentId query parameter; an
// unknown compartment is 404, as on OCI (not found, or not authorized).
func (d *Dialect) compartmentParam(c *call) (string, error) {
	id := c.query("compartmentId")
	if id == "" {
		return "", missing("compartmentId")
	}
	if !d.knownCompartment(c, id) {
		return "", notFound("compartment", id)
	}
	return id, nil
}

// ---- routes ----

func (d *Dialect) routeNetwork() {
	const vn, idn = "virtualnetwork", "identity"
	d.mux.Handle("GET "+PrefixCore+"/vcns/{vcnId}", d.route(vn, "GetVcn", false, d.getVcn))
	d.mux.Handle("GET "+PrefixCore+"/vcns", d.route(vn, "ListVcns", false, d.listVcns))
	d.mux.Handle("GET "+PrefixCore+"/subnets/{subnetId}", d.route(vn, "GetSubnet", false, d.getSubnet))
	d.mux.Handle("GET "+PrefixCore+"/subnets", d.route(vn, "ListSubnets", false, d.listSubnets))
	d.mux.Handle("GET "+PrefixCore+"/securityLists/{securityListId}", d.route(vn, "GetSecurityList", false, d.getSecurityList))
	d.mux.Handle("GET "+PrefixCore+"/securityLists", d.route(vn, "ListSecurityLists", false, d.listSecurityLists))
	d.mux.Handle("PUT "+PrefixCore+"/securityLists/{securityListId}", d.route(vn, "UpdateSecurityList", true, d.updateSecurityList))
	// Identity shares the 20160918 version; the SDK's IdentityClient uses
	// the same path, so one Host reaches it too.
	d.mux.Handle("GET "+PrefixCore+"/availabilityDomains", d.route(idn, "ListAvailabilityDomains", false, d.listAvailabilityDomains))
}

func sdkTime(t time.Time) *common.SDKTime { return &common.SDKTime{Time: t.UTC()} }

func strPtrOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func vcnModel(v *vcnRec) ocicore.Vcn {
	out := ocicore.Vcn{
		CidrBlock:             common.String(v.CIDRBlock),
		CidrBlocks:            []string{v.CIDRBlock},
		CompartmentId:         common.String(v.CompartmentID),
		Id:                    common.String(v.ID),
		LifecycleState:        ocicore.VcnLifecycleStateAvailable,
		DefaultSecurityListId: common.String(v.DefaultSecurityListID),
		DisplayName:           common.String(v.DisplayName),
		DnsLabel:              strPtrOrNil(v.DNSLabel),
		TimeCreated:           sdkTime(v.created),
		FreeformTags:          map[string]string{},
		DefinedTags:           map[string]map[string]interface{}{},
	}
	if v.DNSLabel != "" {
		out.VcnDomainName = common.String(v.DNSLabel + ".oraclevcn.com")
	}
	return out
}

func (n *network) subnetModel(s *subnetRec) ocicore.Subnet {
	p := netip.MustParsePrefix(s.CIDRBlock)
	out := ocicore.Subnet{
		CidrBlock:               common.String(s.CIDRBlock),
		CompartmentId:           common.String(s.CompartmentID),
		Id:                      common.String(s.ID),
		LifecycleState:          ocicore.SubnetLifecycleStateAvailable,
		RouteTableId:            common.String(strings.Replace(s.VCNID, "ocid1.vcn.", "ocid1.routetable.", 1)),
		VcnId:                   common.String(s.VCNID),
		VirtualRouterMac:        common.String("00:00:17:00:00:01"),
		VirtualRouterIp:         common.String(p.Addr().Next().String()),
		AvailabilityDomain:      strPtrOrNil(s.AvailabilityDomain),
		DisplayName:             common.String(s.DisplayName),
		DnsLabel:                strPtrOrNil(s.DNSLabel),
		SecurityListIds:         slices.Clone(s.SecurityListIDs),
		ProhibitPublicIpOnVnic:  common.Bool(s.ProhibitPublicIPOnVNIC),
		ProhibitInternetIngress: common.Bool(s.ProhibitPublicIPOnVNIC),
		TimeCreated:             sdkTime(s.created),
		FreeformTags:            map[string]string{},
		DefinedTags:             map[string]map[string]interface{}{},
	}
	if len(s.IPv6CIDRBlocks) > 0 {
		out.Ipv6CidrBlock, out.Ipv6CidrBlocks = common.String(s.IPv6CIDRBlocks[0]), slices.Clone(s.IPv6CIDRBlocks)
	}
	if v := n.vcns[s.VCNID]; v != nil && v.DNSLabel != "" && s.DNSLabel != "" {
		out.SubnetDomainName = common.String(s.DNSLabel + "." + v.DNSLabel + ".oraclevcn.com")
	}
	return out
}

func secListModel(s *secListRec) ocicore.SecurityList {
	in := s.IngressSecurityRules
	if in == nil {
		in = []ocicore.IngressSecurityRule{}
	}
	eg := s.EgressSecurityRules
	if eg == nil {
		eg = []ocicore.EgressSecurityRule{}
	}
	return ocicore.SecurityList{
		CompartmentId:        common.String(s.CompartmentID),
		DisplayName:          common.String(s.DisplayName),
		EgressSecurityRules:  eg,
		Id:                   common.String(s.ID),
		IngressSecurityRules: in,
		LifecycleState:       ocicore.SecurityListLifecycleStateAvailable,
		TimeCreated:          sdkTime(s.created),
		VcnId:                common.String(s.VCNID),
		FreeformTags:         map[string]string{},
		DefinedTags:          map[string]map[string]interface{}{},
	}
}

func (d *Dialect) getVcn(c *call) (*reply, error) {
	id, err := pathID(c, "vcnId", "vcn")
	if err != nil {
		return nil, err
	}
	d.net.mu.Lock()
	defer d.net.mu.Unlock()
	v := d.net.vcns[id]
	if v == nil {
		return nil, notFound("VCN", id)
	}
	return ok(vcnModel(v)).with("etag", etag(v.ID, 1)), nil
}

func (d *Dialect) listVcns(c *call) (*reply, error) {
	comp, err := d.compartmentParam(c)
	if err != nil {
		return nil, err
	}
	d.net.mu.Lock()
	items := []ocicore.Vcn{}
	for _, id := range slices.Sorted(maps.Keys(d.net.vcns)) {
		if v := d.net.vcns[id]; v.CompartmentID == comp && (c.query("displayName") == "" || c.query("displayName") == v.DisplayName) {
			items = append(items, vcnModel(v))
		}
	}
	d.net.mu.Unlock()
	return page(c, items, nil)
}

func (d *Dialect) getSubnet(c *call) (*reply, error) {
	id, err := pathID(c, "subnetId", "subnet")
	if err != nil {
		return nil, err
	}
	d.net.mu.Lock()
	defer d.net.mu.Unlock()
	s := d.net.subnets[id]
	if s == nil {
		return nil, notFound("subnet", id)
	}
	return ok(d.net.subnetModel(s)).with("etag", etag(s.ID, 1)), nil
}

func (d *Dialect) listSubnets(c *call) (*reply, error) {
	comp, err := d.compartmentParam(c)
	if err != nil {
		return nil, err
	}
	vcn := c.query("vcnId")
	d.net.mu.Lock()
	items := []ocicore.Subnet{}
	for _, id := range slices.Sorted(maps.Keys(d.net.subnets)) {
		s := d.net.subnets[id]
		if s.CompartmentID == comp && (vcn == "" || s.VCNID == vcn) && (c.query("displayName") == "" || c.query("displayName") == s.DisplayName) {
			items = append(items, d.net.subnetModel(s))
		}
	}
	d.net.mu.Unlock()
	return page(c, items, nil)
}

func (d *Dialect) getSecurityList(c *call) (*reply, error) {
	id, err := pathID(c, "securityListId", "securitylist")
	if err != nil {
		return nil, err
	}
	d.net.mu.Lock()
	defer d.net.mu.Unlock()
	s := d.net.secLists[id]
	if s == nil {
		return nil, notFound("security list", id)
	}
	return ok(secListModel(s)).with("etag", etag(s.ID, s.version)), nil
}

func (d *Dialect) listSecurityLists(c *call) (*reply, error) {
	comp, err := d.compartmentParam(c)
	if err != nil {
		return nil, err
	}
	vcn := c.query("vcnId")
	d.net.mu.Lock()
	items := []ocicore.SecurityList{}
	ids := slices.Sorted(maps.Keys(d.net.secLists))
	for _, id := range ids {
		s := d.net.secLists[id]
		if s.CompartmentID == comp && (vcn == "" || s.VCNID == vcn) {
			items = append(items, secListModel(s))
		}
	}
	d.net.mu.Unlock()
	return page(c, items, nil)
}

// updateSecurityList replaces the rules given (a nil list keeps the rules)
// when if-match, if sent, is the current etag.
func (d *Dialect) updateSecurityList(c *call) (*reply, error) {
	id, err := pathID(c, "securityListId", "securitylist")
	if err != nil {
		return nil, err
	}
	var req ocicore.UpdateSecurityListDetails
	if err := c.decode(&req); err != nil {
		return nil, err
	}
	d.net.mu.Lock()
	defer d.net.mu.Unlock()
	s := d.net.secLists[id]
	if s == nil {
		return nil, notFound("security list", id)
	}
	if e := checkIfMatch(c, etag(s.ID, s.version), "the security list's current etag: it changed since it was read"); e != nil {
		return nil, e
	}
	in, eg := s.IngressSecurityRules, s.EgressSecurityRules
	if req.IngressSecurityRules != nil {
		in = req.IngressSecurityRules
	}
	if req.EgressSecurityRules != nil {
		eg = req.EgressSecurityRules
	}
	if e := validateRules(in, eg); e != nil {
		return nil, e
	}
	next := *s
	next.IngressSecurityRules, next.EgressSecurityRules = in, eg
	if req.DisplayName != nil {
		next.DisplayName = *req.DisplayName
	}
	next.version++
	d.net.secLists[id] = &next
	return ok(secListModel(&next)).with("etag", etag(next.ID, next.version)), nil
}

// checkIfMatch refuses a change whose if-match header, if sent, is not
// the current etag (want); current names that etag in the error.
func checkIfMatch(c *call, want, current string) *Error {
	if m := c.r.Header.Get("if-match"); m != "" && m != want {
		return Errorf(http.StatusPreconditionFailed, CodeNoEtagMatch, "The if-match etag %s does not match %s.", m, current)
	}
	return nil
}

// validateRules checks security rules the way the API does.
func validateRules(in []ocicore.IngressSecurityRule, eg []ocicore.EgressSecurityRule) *Error {
	if len(in) > MaxSecurityRules || len(eg) > MaxSecurityRules {
		return Errorf(http.StatusBadRequest, CodeLimitExceeded, "A security list has at most %d ingress and %d egress rules (got %d and %d).", MaxSecurityRules, MaxSecurityRules, len(in), len(eg))
	}
	for i, r := range in {
		if e := validateRule(fmt.Sprintf("ingressSecurityRules[%d]", i), r.Protocol, r.Source, "source", string(r.SourceType), r.TcpOptions, r.UdpOptions); e != nil {
			return e
		}
	}
	for i, r := range eg {
		if e := validateRule(fmt.Sprintf("egressSecurityRules[%d]", i), r.Protocol, r.Destination, "destination", string(r.DestinationType), r.TcpOptions, r.UdpOptions); e != nil {
			return e
		}
	}
	return nil
}

func validateRule(where string, proto, addr *string, addrField, addrType string, tcp *ocicore.TcpOptions, udp *ocicore.UdpOptions) *Error {
	if proto == nil || *proto == "" {
		return missing(where + ".protocol")
	}
	if *proto != "all" {
		if n, err := strconv.Atoi(*proto); err != nil || n < 0 || n > 255 {
			return badRequest("%s.protocol %q must be \"all\" or an IP protocol number (6 TCP, 17 UDP, 1 ICMP, 58 ICMPv6).", where, *proto)
		}
	}
	if addr == nil || *addr == "" {
		return missing(where + "." + addrField)
	}
	if addrType == "" || addrType == "CIDR_BLOCK" {
		if _, err := netip.ParsePrefix(*addr); err != nil {
			return badRequest("%s.%s %q is not a CIDR block.", where, addrField, *addr)
		}
	}
	if tcp != nil && *proto != "6" {
		return badRequest("%s: tcpOptions need protocol 6 (TCP), not %q.", where, *proto)
	}
	if udp != nil && *proto != "17" {
		return badRequest("%s: udpOptions need protocol 17 (UDP), not %q.", where, *proto)
	}
	var ranges []*ocicore.PortRange
	if tcp != nil {
		ranges = append(ranges, tcp.DestinationPortRange, tcp.SourcePortRange)
	}
	if udp != nil {
		ranges = append(ranges, udp.DestinationPortRange, udp.SourcePortRange)
	}
	for _, pr := range ranges {
		if pr == nil {
			continue
		}
		if pr.Min == nil || pr.Max == nil || *pr.Min < 1 || *pr.Max > 65535 || *pr.Min > *pr.Max {
			return badRequest("%s: a port range needs 1 <= min <= max <= 65535.", where)
		}
	}
	return nil
}

func (d *Dialect) listAvailabilityDomains(c *call) (*reply, error) {
	comp, err := d.compartmentParam(c)
	if err != nil {
		return nil, err
	}
	items := []identity.AvailabilityDomain{}
	for _, ad := range d.net.availabilityDomains() {
		items = append(items, identity.AvailabilityDomain{
			Name:          common.String(ad),
			Id:            common.String(stableOCID("availabilitydomain", ad)),
			CompartmentId: common.String(comp),
		})
	}
	sort.Slice(items, func(i, j int) bool { return *items[i].Name < *items[j].Name })
	// The real operation is not paginated.
	return ok(items), nil
}
