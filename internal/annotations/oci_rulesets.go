package annotations

// OCI: rule sets
const (
	// OCILBRuleSets gives the Load Balancer rule sets, under the public OCI
	// cloud-controller-manager's name: a JSON object from rule set name (1
	// to 32 characters) to {"items": [rules]}, each rule an OCI Rule with
	// its "action" (ADD_HTTP_REQUEST_HEADER, ALLOW, REDIRECT, HTTP_HEADER,
	// IP_BASED_MAX_CONNECTIONS, ...). Every listener applies all of them. A
	// changed rule set is updated in place; one taken out of the value is
	// removed from the listeners, then deleted. Bad JSON or an unknown
	// action is an error before anything changes. A Network Load Balancer
	// has no rule sets: the Service gets a Warning Event, nothing else.
	//
	// Type: JSON object (rule set name -> {"items": [...]})
	// Default: none
	// Providers: oci (lb)
	OCILBRuleSets Name = "oci.oraclecloud.com/oci-load-balancer-rule-sets"
)
