package testcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	authv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ServiceAccountKubeconfig mints a token for namespace/name and writes a
// kubeconfig that authenticates with it, so a process runs with exactly the
// permissions that RBAC grants that ServiceAccount.
func (c *Cluster) ServiceAccountKubeconfig(ctx context.Context, namespace, name string) (string, error) {
	token, err := c.ServiceAccountToken(ctx, namespace, name)
	if err != nil {
		return "", err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: c.Admin.Host, CertificateAuthorityData: c.Admin.CAData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: name}
	cfg.CurrentContext = "test"
	path := filepath.Join(c.Dir, namespace+"-"+name+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", fmt.Errorf("write kubeconfig for %s/%s: %w", namespace, name, err)
	}
	return path, os.Chmod(path, 0o600)
}

// ServiceAccountToken mints a bound token (valid for a day) for the
// ServiceAccount namespace/name through the TokenRequest API.
func (c *Cluster) ServiceAccountToken(ctx context.Context, namespace, name string) (string, error) {
	expiry := int64(24 * 3600)
	tr, err := c.Client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token for serviceaccount %s/%s: %w", namespace, name, err)
	}
	return tr.Status.Token, nil
}
