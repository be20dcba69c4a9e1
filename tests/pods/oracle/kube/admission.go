package main

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	"k8s.io/kubernetes/plugin/pkg/admission/defaulttolerationseconds"
	"k8s.io/kubernetes/plugin/pkg/admission/priority"
	"k8s.io/kubernetes/plugin/pkg/admission/serviceaccount"
)

// The PriorityClasses every cluster has (the API server creates them at start).
var systemClasses = map[string]int32{
	"system-node-critical":    2000001000,
	"system-cluster-critical": 2000000000,
}

// admitPods runs a plain cluster's built-in admission plugins that change a Pod
// (ServiceAccount, Priority, DefaultTolerationSeconds), in the API server's order,
// on each Pod. The service accounts the Pods name exist (a cluster without them
// refuses the Pods); a Pod naming a PriorityClass other than the system ones skips
// the Priority plugin (its value is the cluster's), as trainc leaves it unset.
func admitPods(pods []corev1.Pod) []string {
	objects := []runtime.Object{}
	seen := map[string]bool{}
	for _, pod := range pods {
		account := pod.Spec.ServiceAccountName
		if account == "" {
			account = "default"
		}
		key := pod.Namespace + "/" + account
		if !seen[key] {
			seen[key] = true
			objects = append(objects, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: account, Namespace: pod.Namespace}})
		}
	}
	for name, value := range systemClasses {
		class := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
		legacyscheme.Scheme.Default(class) // as the API server stores it: preemptionPolicy
		objects = append(objects, class)
	}
	client := fake.NewSimpleClientset(objects...)
	factory := informers.NewSharedInformerFactory(client, 0)
	accounts := serviceaccount.NewServiceAccount()
	accounts.SetExternalKubeClientSet(client)
	accounts.SetExternalKubeInformerFactory(factory)
	priorities := priority.NewPlugin()
	priorities.SetExternalKubeClientSet(client)
	priorities.SetExternalKubeInformerFactory(factory)
	tolerations := defaulttolerationseconds.NewDefaultTolerationSeconds()
	tolerations.InspectFeatureGates(utilfeature.DefaultFeatureGate)
	for _, plugin := range []admission.InitializationValidator{accounts, priorities, tolerations} {
		must(plugin.ValidateInitialization())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())

	var errs []string
	for i := range pods {
		pod := &pods[i]
		var internal core.Pod
		must(legacyscheme.Scheme.Convert(pod, &internal, nil))
		attributes := admission.NewAttributesRecord(&internal, nil, core.Kind("Pod").WithVersion("v1"),
			pod.Namespace, pod.Name, core.Resource("pods").WithVersion("v1"), "", admission.Create,
			&metav1.CreateOptions{}, false, nil)
		plugins := []admission.MutationInterface{accounts, priorities, tolerations}
		if _, system := systemClasses[internal.Spec.PriorityClassName]; internal.Spec.PriorityClassName != "" && !system {
			plugins = []admission.MutationInterface{accounts, tolerations}
		}
		for _, plugin := range plugins {
			if err := plugin.Admit(ctx, attributes, nil); err != nil {
				errs = append(errs, pod.Name+": "+err.Error())
			}
		}
		var admitted corev1.Pod
		must(legacyscheme.Scheme.Convert(&internal, &admitted, nil))
		placeholderTokenVolume(&admitted)
		*pod = admitted
	}
	return errs
}

// placeholderTokenVolume writes the token volume's random suffix as trainc's placeholder.
func placeholderTokenVolume(pod *corev1.Pod) {
	const prefix = "kube-api-access-"
	rename := map[string]string{}
	for i, volume := range pod.Spec.Volumes {
		if strings.HasPrefix(volume.Name, prefix) {
			rename[volume.Name] = prefix + nameSuffix
			pod.Spec.Volumes[i].Name = prefix + nameSuffix
		}
	}
	for _, containers := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range containers {
			for j, mount := range containers[i].VolumeMounts {
				if name, ok := rename[mount.Name]; ok {
					containers[i].VolumeMounts[j].Name = name
				}
			}
		}
	}
}
