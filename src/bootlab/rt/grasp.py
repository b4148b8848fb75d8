"""Export to Grasp, the trace visualiser of Holenderski et al. (TU Eindhoven) used for Fig. 8
of the first seed.

A Grasp trace is a Tcl script: `newTask` and `newServer` declarations, then one
`plot TIME EVENT ...` command per event: jobArrived JOB TASK, jobResumed JOB,
jobPreempted JOB [-target JOB], jobCompleted JOB, serverReplenished SERVER AMOUNT,
serverResumed SERVER, serverPreempted SERVER, serverDepleted SERVER, and
message {TEXT} -color C.  This is the syntax written by Grasp's own recorders
(the uC/OS-II and RELTEQ loggers).  Those recorders do not link a task to its server
in the trace, so neither does this export; the task's name says which server it runs in.
Times are written in microseconds from the first event.
"""

from __future__ import annotations

from .gantt import PALETTE
from .schedule import Schedule
from .trace import Event, Trace
from .units import format_duration

_JOB_EVENTS = {"start": "jobResumed", "resume": "jobResumed", "preempt": "jobPreempted", "complete": "jobCompleted"}
_SERVER_EVENTS = {"server_resume": "serverResumed", "server_preempt": "serverPreempted", "deplete": "serverDepleted"}


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("[", "\\[").replace("$", "\\$") + '"'


def grasp_trace(trace: Trace, schedule: Schedule) -> str:
    origin = schedule.start

    def when(event: Event) -> str:
        return format_duration(max(event.time - origin, 0), "us")

    def job(event: Event) -> str:
        return f"job{event['task']}.{event['job']}"

    out = [f"# Grasp trace exported by bootlab from {trace.source}; times in microseconds"]
    for i, task in enumerate(schedule.task_ids()):
        fields = schedule.tasks.get(task, {})
        server = schedule.task_server(task)
        name = schedule.task_label(task) + (f" ({schedule.server_label(server)})" if server is not None else "")
        priority = f" -priority {fields['prio']}" if "prio" in fields else ""
        out.append(f"newTask task{task}{priority} -name {_quote(name)} -color {PALETTE[i % len(PALETTE)]}")
    for server in schedule.server_ids():
        fields = schedule.servers.get(server, {})
        budget = format_duration(fields["budget"], "us") if "budget" in fields else "0"
        priority = f" -priority {fields['prio']}" if "prio" in fields else ""
        out.append(f"newServer server{server}{priority} -budget {budget} -capacity {budget} -name {_quote(schedule.server_label(server))}")
    for event in trace.events:
        name = event.name
        if name == "release":
            out.append(f"plot {when(event)} jobArrived {job(event)} task{event['task']}")
        elif name in _JOB_EVENTS:
            out.append(f"plot {when(event)} {_JOB_EVENTS[name]} {job(event)}")
        elif name == "replenish":
            out.append(f"plot {when(event)} serverReplenished server{event['server']} {format_duration(event['budget'], 'us')}")
        elif name in _SERVER_EVENTS:
            out.append(f"plot {when(event)} {_SERVER_EVENTS[name]} server{event['server']}")
        elif name == "miss":
            label = schedule.task_label(event["task"]).replace("{", "(").replace("}", ")")
            out.append(f"plot {when(event)} message {{{label} job {event['job']} missed its deadline}} -color red")
        elif name == "overflow":
            out.append(f"plot {when(event)} message {{recorder lost {event['lost']} events}} -color gray")
    return "\n".join(out) + "\n"
