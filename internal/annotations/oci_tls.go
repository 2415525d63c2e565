package annotations

// OCI: TLS on the Load Balancer under the public OCI CCM's names
//
// TLS ends at the Load Balancer on the ssl-ports, with the certificate of a
// Secret in the Service's namespace; the backend sets of those ports can
// speak TLS to the nodes too. The CCM reads the Secrets when it syncs the
// Service (it does not watch them): after changing a Secret, touch the
// Service or wait for the periodic resync. docs/loadbalancers.md (TLS on
// OCI load balancers) tells the whole story; a Network Load Balancer does not end TLS and
// ignores these, with a Warning Event.
const (
	// OCILBSSLPorts lists the Service ports whose listeners end TLS, as a
	// comma-separated list ("443, 8443"). Each must be a port of the
	// Service, and tls-secret or tls-backendset-secret must be set.
	//
	// Type: comma-separated ports
	// Default: none
	// Providers: oci (lb)
	OCILBSSLPorts Name = OCILBPrefix + "ssl-ports"

	// OCILBTLSSecret names the Secret (in the Service's namespace, keys
	// tls.crt and tls.key, optionally ca.crt: a kubernetes.io/tls Secret)
	// whose certificate the ssl-ports' listeners serve. It becomes a
	// certificate on the load balancer named by a hash of its content: a
	// changed Secret is a new certificate, the listeners move to it, and
	// the old one is deleted. A missing or invalid Secret is an Event, and
	// the listeners keep their current certificate.
	//
	// Type: Secret name
	// Default: none
	// Providers: oci (lb)
	OCILBTLSSecret Name = OCILBPrefix + "tls-secret"

	// OCILBTLSBackendSetSecret names the Secret (keys tls.crt and tls.key,
	// and ca.crt) the ssl-ports' backend sets use to speak TLS to the
	// nodes: ca.crt verifies the nodes' certificates, tls.crt is the
	// client certificate they may ask for.
	//
	// Type: Secret name
	// Default: none
	// Providers: oci (lb)
	OCILBTLSBackendSetSecret Name = OCILBPrefix + "tls-backendset-secret"

	// OCILBListenerSSLConfig chooses the TLS listeners' cipher suite (an
	// OCI predefined or custom suite name) and protocols, as JSON:
	// {"CipherSuiteName":"oci-default-http2-tls-12-13-ssl-cipher-suite-v1","Protocols":["TLSv1.2","TLSv1.3"]}.
	//
	// Type: JSON object
	// Default: {"CipherSuiteName":"oci-default-ssl-cipher-suite-v1","Protocols":["TLSv1.2"]}
	// Providers: oci (lb)
	OCILBListenerSSLConfig Name = "oci.oraclecloud.com/oci-load-balancer-listener-ssl-config"

	// OCILBBackendSetSSLConfig is OCILBListenerSSLConfig for the TLS
	// backend sets.
	//
	// Type: JSON object
	// Default: {"CipherSuiteName":"oci-wider-compatible-ssl-cipher-suite-v1","Protocols":["TLSv1.2"]}
	// Providers: oci (lb)
	OCILBBackendSetSSLConfig Name = "oci.oraclecloud.com/oci-load-balancer-backendset-ssl-config"
)
