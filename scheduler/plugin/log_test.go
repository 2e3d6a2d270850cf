package plugin

import "k8s.io/klog/v2"

func klogDiscard() klog.Logger { return klog.Background().V(10) }
