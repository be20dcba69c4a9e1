-- Argo CD health of a TrainJob (trainer.kubeflow.org/v1alpha1, Kubeflow Trainer v2.3.0
-- status): conditions Complete, Failed (reasons e.g. DeadlineExceeded,
-- TrainingRuntimeNotSupported), Suspended (reasons Suspended / Resumed).
-- Healthy once Complete, Degraded once Failed, Suspended while suspended,
-- Progressing otherwise.
local hs = {status = "Progressing", message = "Waiting for the Trainer controller"}
local conditions = (obj.status ~= nil and obj.status.conditions) or {}
local function find(kind)
  for _, condition in ipairs(conditions) do
    if condition.type == kind and condition.status == "True" then
      return condition
    end
  end
  return nil
end
local failed = find("Failed")
if failed ~= nil then
  hs.status = "Degraded"
  hs.message = failed.message or failed.reason or "TrainJob failed"
  return hs
end
local complete = find("Complete")
if complete ~= nil then
  hs.status = "Healthy"
  hs.message = complete.message or "TrainJob completed"
  return hs
end
local suspended = find("Suspended")
if suspended ~= nil or (obj.spec ~= nil and obj.spec.suspend == true) then
  hs.status = "Suspended"
  hs.message = (suspended and suspended.message) or "TrainJob is suspended"
  return hs
end
if obj.status ~= nil and obj.status.jobsStatus ~= nil then
  local active, succeeded = 0, 0
  for _, job in ipairs(obj.status.jobsStatus) do
    active = active + (job.active or 0)
    succeeded = succeeded + (job.succeeded or 0)
  end
  hs.message = string.format("TrainJob running: %d jobs active, %d succeeded", active, succeeded)
end
return hs
