package annotations

// OCI: proxy protocol
//
// The PROXY protocol header that the load balancer sends to the backends
// before the client's bytes, so that they learn the client's address,
// under the public OCI cloud-controller-manager's names.
var (
	// OCILBConnectionProxyProtocolVersion makes the Load Balancer's
	// listeners send the PROXY protocol header of this version to the
	// backends (connectionConfiguration.backendTcpProxyProtocolVersion):
	// 1 (text) or 2 (binary). Removing it turns it off. A change updates
	// the listeners in place.
	//
	// Providers: oci (lb)
	OCILBConnectionProxyProtocolVersion = Int{Name: OCILBPrefix + "connection-proxy-protocol-version", Min: 1, Max: 2, DefaultDoc: "none (no header)"}

	// OCINLBIsPpv2Enabled makes the Network Load Balancer's TCP listeners
	// send the PROXY protocol version 2 header to the backends (listener
	// isPpv2Enabled); UDP listeners send none, as OCI offers it for TCP
	// listeners. A change updates the listeners in place.
	//
	// Providers: oci (nlb)
	OCINLBIsPpv2Enabled = Bool{Name: OCINLBPrefix + "is-ppv2-enabled"}
)
