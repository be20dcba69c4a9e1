-- Argo CD health of a JobSet (jobset.x-k8s.io/v1alpha2, JobSet v0.12.0 status):
-- conditions Completed, Failed, Suspended (reasons SuspendedJobs / ResumeJobs),
-- StartupPolicyInProgress, RestartingJobSet; status.terminalState Completed or Failed.
-- Healthy once Completed, Degraded once Failed, Suspended while suspended,
-- Progressing otherwise (pods starting or running).
local hs = {status = "Progressing", message = "Waiting for the JobSet controller"}
if obj.status == nil then
  return hs
end
local conditions = obj.status.conditions or {}
local function find(kind)
  for _, condition in ipairs(conditions) do
    if condition.type == kind and condition.status == "True" then
      return condition
    end
  end
  return nil
end
local failed = find("Failed")
if failed ~= nil or obj.status.terminalState == "Failed" then
  hs.status = "Degraded"
  hs.message = (failed and failed.message) or "JobSet failed"
  return hs
end
local completed = find("Completed")
if completed ~= nil or obj.status.terminalState == "Completed" then
  hs.status = "Healthy"
  hs.message = (completed and completed.message) or "JobSet completed"
  return hs
end
local suspended = find("Suspended")
if suspended ~= nil or (obj.spec ~= nil and obj.spec.suspend == true) then
  hs.status = "Suspended"
  hs.message = (suspended and suspended.message) or "JobSet is suspended"
  return hs
end
local restarting = find("RestartingJobSet")
if restarting ~= nil then
  hs.message = restarting.message or "JobSet is restarting"
  return hs
end
local ready, active = 0, 0
for _, job in ipairs(obj.status.replicatedJobsStatus or {}) do
  ready = ready + (job.ready or 0)
  active = active + (job.active or 0)
end
hs.message = string.format("JobSet running: %d jobs ready, %d active, %d restarts",
  ready, active, obj.status.restarts or 0)
return hs
