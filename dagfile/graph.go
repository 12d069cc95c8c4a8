package dagfile

import (
	"fmt"
	"slices"
	"strings"
)

// link computes lineage, checks sinks and deps, fills Upstream and
// Downstream and reports cycles.
func (p *parser) link() {
	writers := p.writers()
	up := map[string][]string{}
	for _, t := range p.f.Tasks {
		up[t.Name] = append(p.lineage(t, writers), p.deps(t)...)
	}
	for _, t := range p.f.Tasks {
		slices.Sort(up[t.Name])
		t.Upstream = slices.Compact(up[t.Name])
		for _, u := range t.Upstream {
			if ut := p.f.byName[u]; ut != nil {
				ut.Downstream = append(ut.Downstream, t.Name)
			}
		}
	}
	p.cycles()
}

// writers maps each sink to the task that writes it; a second writer of the
// same table is an error (rule DAG-003).
func (p *parser) writers() map[string]*Task {
	w := map[string]*Task{}
	for _, t := range p.f.Tasks {
		for _, s := range t.Sinks() {
			first, dup := w[s.key()]
			if !dup {
				w[s.key()] = t
				continue
			}
			p.d.failAt(t.at[t.sinkAt], "tasks."+t.Name+"."+t.sinkAt, RuleDuplicateSink,
				"sink %s is also written by task %s: a table has one writer (merge the tasks, or write another table)", s, first.Name)
		}
	}
	return w
}

// lineage returns the tasks that write a table t reads.
func (p *parser) lineage(t *Task, writers map[string]*Task) []string {
	var out []string
	for _, s := range t.Sources() {
		if w := writers[s.key()]; w != nil && w != t {
			out = append(out, w.Name)
		}
	}
	return out
}

// deps checks the explicit deps of t (rule DAG-006) and returns the known ones.
func (p *parser) deps(t *Task) []string {
	var out []string
	for _, d := range t.Deps {
		if p.f.byName[d] != nil {
			out = append(out, d)
			continue
		}
		p.d.failAt(t.at["deps"], "tasks."+t.Name+".deps", RuleUnknownTask,
			"unknown task %q%s", d, strings.Replace(didYouMean(d, sortedKeys(p.f.byName)), "allowed:", "tasks:", 1))
	}
	return out
}

// cycles reports every dependency cycle once, as a path from its smallest
// task name (rule DAG-001).
func (p *parser) cycles() {
	state := map[string]int{} // 0 new, 1 on the stack, 2 done
	seen := map[string]bool{}
	var stack []string
	var visit func(name string)
	visit = func(name string) {
		state[name] = 1
		stack = append(stack, name)
		for _, next := range p.f.byName[name].Downstream {
			switch state[next] {
			case 0:
				visit(next)
			case 1:
				p.reportCycle(stack[slices.Index(stack, next):], seen)
			}
		}
		stack = stack[:len(stack)-1]
		state[name] = 2
	}
	for _, t := range p.f.Tasks {
		if state[t.Name] == 0 {
			visit(t.Name)
		}
	}
}

// reportCycle reports the cycle through names (in dependency order).
func (p *parser) reportCycle(names []string, seen map[string]bool) {
	start := slices.Index(names, slices.Min(names))
	path := slices.Concat(names[start:], names[:start], names[start:start+1])
	key := strings.Join(path, " → ")
	if seen[key] {
		return
	}
	seen[key] = true
	var why []string
	for i := 0; i+1 < len(path); i++ {
		why = append(why, p.edgeReason(p.f.byName[path[i]], p.f.byName[path[i+1]]))
	}
	t := p.f.byName[path[0]]
	p.d.failAt(pos{t.Line, t.Col}, "tasks."+t.Name, RuleCycle,
		"dependency cycle: %s (%s); remove one of these dependencies", key, strings.Join(why, "; "))
}

// edgeReason says why to depends on from: deps, or a table it reads.
func (p *parser) edgeReason(from, to *Task) string {
	if slices.Contains(to.Deps, from.Name) {
		return fmt.Sprintf("%s deps on %s", to.Name, from.Name)
	}
	for _, s := range to.Sources() {
		for _, w := range from.Sinks() {
			if s.key() == w.key() {
				return fmt.Sprintf("%s reads %s", to.Name, s)
			}
		}
	}
	return to.Name + " follows " + from.Name
}

// Order returns the tasks in dependency order: each after its upstreams,
// ties broken by name.
func (f *File) Order() []*Task {
	indeg := map[string]int{}
	for _, t := range f.Tasks {
		indeg[t.Name] = len(t.Upstream)
	}
	var ready, out []string
	for _, t := range f.Tasks {
		if indeg[t.Name] == 0 {
			ready = append(ready, t.Name)
		}
	}
	for len(ready) > 0 {
		slices.Sort(ready)
		name := ready[0]
		ready = ready[1:]
		out = append(out, name)
		for _, d := range f.byName[name].Downstream {
			if indeg[d]--; indeg[d] == 0 {
				ready = append(ready, d)
			}
		}
	}
	tasks := make([]*Task, len(out))
	for i, name := range out {
		tasks[i] = f.byName[name]
	}
	return tasks
}

// Select returns the tasks matched by any of the selectors, sorted by name;
// no selector selects every task. A selector is a task name, tag:NAME or
// kind:transfer|model|stream; one argument may hold several, separated by
// commas. A selector that matches no task is an error.
func (f *File) Select(selectors ...string) ([]*Task, error) {
	var sels []string
	for _, s := range selectors {
		for _, part := range strings.Split(s, ",") {
			if part = strings.TrimSpace(part); part != "" {
				sels = append(sels, part)
			}
		}
	}
	if len(sels) == 0 {
		return f.Tasks, nil
	}
	picked := map[string]bool{}
	for _, sel := range sels {
		if err := f.selectOne(sel, picked); err != nil {
			return nil, err
		}
	}
	var out []*Task
	for _, t := range f.Tasks {
		if picked[t.Name] {
			out = append(out, t)
		}
	}
	return out, nil
}

// selectOne marks the tasks sel matches.
func (f *File) selectOne(sel string, picked map[string]bool) error {
	kind, val, ok := strings.Cut(sel, ":")
	if !ok {
		kind, val = "name", sel
	}
	n := 0
	for _, t := range f.Tasks {
		if matches(t, kind, val) {
			picked[t.Name] = true
			n++
		}
	}
	switch {
	case kind != "name" && kind != "tag" && kind != "kind":
		return fmt.Errorf("select %q: unknown selector %q: use a task name, tag:NAME or kind:transfer|model|stream", sel, kind+":")
	case n == 0:
		return fmt.Errorf("select %q: no task matches (tasks: %s; tags: %s)", sel,
			strings.Join(sortedKeys(f.byName), ", "), strings.Join(f.allTags(), ", "))
	}
	return nil
}

func matches(t *Task, kind, val string) bool {
	switch kind {
	case "name":
		return t.Name == val
	case "tag":
		return slices.Contains(t.Tags, val)
	case "kind":
		return string(t.Kind) == val
	}
	return false
}

// allTags returns every tag used, sorted.
func (f *File) allTags() []string {
	var out []string
	for _, t := range f.Tasks {
		out = append(out, t.Tags...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
