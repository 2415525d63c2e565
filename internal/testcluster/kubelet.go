package testcluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	cloudapi "k8s.io/cloud-provider/api"
)

// NodeSpec describes a Node the way a kubelet started with
// --cloud-provider=external would register it.
type NodeSpec struct {
	Name       string
	InternalIP string // the host's address, reported by the kubelet
	Hostname   string // defaults to Name
	ProviderID string // usually empty: the CCM sets it
	PodCIDR    string // set by tests, since no node IPAM controller runs
	Labels     map[string]string
}

// RegisterNode creates the Node with the uninitialized taint, the host's
// addresses and a Ready condition, as the kubelet does.
func (c *Cluster) RegisterNode(ctx context.Context, s NodeSpec) (*corev1.Node, error) {
	if s.Hostname == "" {
		s.Hostname = s.Name
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:   s.Name,
			Labels: map[string]string{corev1.LabelHostname: s.Hostname, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64"},
		},
		Spec: corev1.NodeSpec{
			ProviderID: s.ProviderID,
			PodCIDR:    s.PodCIDR,
			Taints: []corev1.Taint{{
				Key:    cloudapi.TaintExternalCloudProvider,
				Value:  "true",
				Effect: corev1.TaintEffectNoSchedule,
			}},
		},
	}
	if s.PodCIDR != "" {
		node.Spec.PodCIDRs = []string{s.PodCIDR}
	}
	for k, v := range s.Labels {
		node.Labels[k] = v
	}
	// Nodes keep their status on create, so one call registers the node the
	// way the kubelet does; a separate status update would race the CCM.
	node.Status = kubeletStatus(s, true)
	created, err := c.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("register node %s: %w", s.Name, err)
	}
	return created, nil
}

func kubeletStatus(s NodeSpec, ready bool) corev1.NodeStatus {
	var addrs []corev1.NodeAddress
	if s.InternalIP != "" {
		addrs = append(addrs, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: s.InternalIP})
	}
	addrs = append(addrs, corev1.NodeAddress{Type: corev1.NodeHostName, Address: s.Hostname})
	return corev1.NodeStatus{
		Addresses:  addrs,
		Conditions: []corev1.NodeCondition{readyCondition(ready)},
		Capacity: corev1.ResourceList{
			corev1.ResourceCPU:    mustQuantity("2"),
			corev1.ResourceMemory: mustQuantity("4Gi"),
			corev1.ResourcePods:   mustQuantity("110"),
		},
	}
}

func readyCondition(ready bool) corev1.NodeCondition {
	status, reason := corev1.ConditionTrue, "KubeletReady"
	if !ready {
		status, reason = corev1.ConditionUnknown, "NodeStatusUnknown"
	}
	now := metav1.NewTime(time.Now())
	return corev1.NodeCondition{
		Type: corev1.NodeReady, Status: status, Reason: reason,
		LastHeartbeatTime: now, LastTransitionTime: now,
	}
}

// SetNodeReady flips the node's Ready condition, standing in for a kubelet
// that stops (or resumes) posting status.
func (c *Cluster) SetNodeReady(ctx context.Context, name string, ready bool) error {
	// The CCM may update the node meanwhile: retry on conflict.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := c.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cond := readyCondition(ready)
		replaced := false
		for i := range node.Status.Conditions {
			if node.Status.Conditions[i].Type == corev1.NodeReady {
				node.Status.Conditions[i] = cond
				replaced = true
			}
		}
		if !replaced {
			node.Status.Conditions = append(node.Status.Conditions, cond)
		}
		_, err = c.Client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("set node %s ready=%v: %w", name, ready, err)
	}
	return nil
}

// WaitForNode polls the Node until cond holds or ctx ends; it returns the
// last version it saw so a failing test can show it.
func (c *Cluster) WaitForNode(ctx context.Context, name string, cond func(*corev1.Node) bool) (*corev1.Node, error) {
	var last *corev1.Node
	err := waitFor(ctx, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		n, err := c.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil //nolint:nilerr // keep polling through transient errors
		}
		last = n
		return cond(n), nil
	})
	return last, err
}

// HasTaint reports whether the node carries a taint with this key.
func HasTaint(n *corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }
