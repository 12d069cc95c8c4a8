package dagfile

import (
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Deploy is the deploy: section: how the generated pod specs (Argo,
// Airflow's KubernetesPodOperator) run weir. Every field is optional; the
// zero value is the generator's defaults. A task's deploy: overrides
// resources and adds volumes (Task.Deploy is already merged).
type Deploy struct {
	Image           string // the weir image (generate --image wins)
	ImagePullPolicy string // Always | IfNotPresent | Never
	Namespace       string
	ServiceAccount  string
	Dagfile         string            // the dagfile's path in the image (generate --dagfile-path wins)
	Requests        map[string]string // resources.requests: cpu, memory, …
	Limits          map[string]string // resources.limits
	Volumes         []Volume
}

// Volume is a Kubernetes volume mounted into the weir container.
type Volume struct {
	Name      string
	Claim     string // a PersistentVolumeClaim name, or
	ConfigMap string // a ConfigMap name, or
	Secret    string // a Secret name
	MountPath string
	ReadOnly  bool
}

// IsZero reports whether d sets nothing.
func (d *Deploy) IsZero() bool {
	return d == nil || (d.Image == "" && d.ImagePullPolicy == "" && d.Namespace == "" && d.ServiceAccount == "" &&
		d.Dagfile == "" && len(d.Requests) == 0 && len(d.Limits) == 0 && len(d.Volumes) == 0)
}

var (
	deployKeys     = []string{"image", "image_pull_policy", "namespace", "service_account", "dagfile", "resources", "volumes"}
	taskDeployKeys = []string{"resources", "volumes"}
	resourceKeys   = []string{"requests", "limits"}
	volumeKeys     = []string{"name", "claim", "config_map", "secret", "mount_path", "read_only"}
	kubeNameRE     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)
	quantityRE     = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(m|k|Ki|M|Mi|G|Gi|T|Ti|P|Pi|E|Ei)?$`)
)

// deploy decodes a deploy: mapping (the top level's, or a task's with
// allowed = taskDeployKeys) into d.
func (p *parser) deploy(f field, allowed []string, d *Deploy) {
	for _, g := range p.d.fields(f.val, f.path, allowed) {
		switch g.name {
		case "image":
			d.Image = p.d.str(g)
		case "image_pull_policy":
			d.ImagePullPolicy = p.d.enum(g, "image_pull_policy", "Always", "IfNotPresent", "Never")
		case "namespace":
			d.Namespace = p.kubeName(g)
		case "service_account":
			d.ServiceAccount = p.kubeName(g)
		case "dagfile":
			d.Dagfile = p.d.str(g)
		case "resources":
			p.resources(g, d)
		case "volumes":
			for _, item := range p.d.items(g) {
				if v, ok := p.volume(item); ok {
					d.Volumes = append(d.Volumes, v)
				}
			}
		}
	}
}

func (p *parser) kubeName(g field) string {
	s := p.d.str(g)
	if s != "" && !kubeNameRE.MatchString(s) {
		p.d.fail(g.val, g.path, "%q is not a Kubernetes name: use lowercase letters, digits, - and .", s)
		return ""
	}
	return s
}

// resources decodes requests: and limits: (cpu, memory, … → a quantity).
func (p *parser) resources(f field, d *Deploy) {
	for _, g := range p.d.fields(f.val, f.path, resourceKeys) {
		m := map[string]string{}
		for _, r := range p.d.fields(g.val, g.path, nil) {
			q := p.d.str(r)
			if q != "" && !quantityRE.MatchString(q) {
				p.d.fail(r.val, r.path, "bad quantity %q: e.g. 500m, 2, 512Mi, 4Gi", q)
				continue
			}
			m[r.name] = q
		}
		if g.name == "requests" {
			d.Requests = m
		} else {
			d.Limits = m
		}
	}
}

// volume decodes one volumes: entry: name, exactly one source, mount_path.
func (p *parser) volume(f field) (Volume, bool) {
	var v Volume
	fs := map[string]field{}
	for _, g := range p.d.fields(f.val, f.path, volumeKeys) {
		fs[g.name] = g
		switch g.name {
		case "name":
			v.Name = p.kubeName(g)
		case "claim":
			v.Claim = p.d.str(g)
		case "config_map":
			v.ConfigMap = p.d.str(g)
		case "secret":
			v.Secret = p.d.str(g)
		case "mount_path":
			v.MountPath = p.d.str(g)
		case "read_only":
			v.ReadOnly = p.d.boolean(g)
		}
	}
	if resolve(f.val).Kind != yaml.MappingNode { // fields reported it
		return v, false
	}
	ok := p.require(fs, f, "name", "a Kubernetes name") && p.require(fs, f, "mount_path", "where the container sees it, e.g. /weir/lake")
	n := 0
	for _, k := range []string{"claim", "config_map", "secret"} {
		if _, set := fs[k]; set {
			n++
		}
	}
	if n != 1 {
		p.d.fail(f.val, f.path, "a volume has exactly one of claim: (a PersistentVolumeClaim), config_map: or secret:")
		ok = false
	}
	if v.MountPath != "" && !strings.HasPrefix(v.MountPath, "/") {
		p.d.fail(fs["mount_path"].val, fs["mount_path"].path, "mount_path %q must be absolute", v.MountPath)
		ok = false
	}
	return v, ok
}

// mergeDeploy returns the file's deploy settings with a task's on top: its
// resources replace the file's (per key), its volumes are added.
func mergeDeploy(file, task Deploy) Deploy {
	out := file
	out.Requests = mergeMap(file.Requests, task.Requests)
	out.Limits = mergeMap(file.Limits, task.Limits)
	out.Volumes = slices.Concat(file.Volumes, task.Volumes)
	return out
}

func mergeMap(a, b map[string]string) map[string]string {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// LocalPaths returns the local files a connection's literal URL names: a
// file:// (or bare path) connection's folder, an Iceberg SQLite catalog and
// a file:// warehouse. A pod sees none of them without a volume.
func (c *Connection) LocalPaths() []string {
	var out []string
	switch c.Scheme() {
	case "file":
		out = append(out, strings.TrimPrefix(c.Raw, "file://"))
	case "iceberg":
		for _, m := range localParamRE.FindAllStringSubmatch(c.Raw, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

var localParamRE = regexp.MustCompile(`(?:uri=sqlite://|warehouse=file://)([^&#]*)`)
