"""Recording stand-ins for the kubernetes client models the generated
KubernetesPodOperator tasks use; each takes only the keyword arguments the
real model has (a typo fails the import)."""
from weirstub import strict_kwargs


class _Model:
    fields = set()

    def __init__(self, **kwargs):
        strict_kwargs(type(self).__name__, kwargs, self.fields)
        self.kwargs = kwargs

    def record(self):
        return {k: v.record() if isinstance(v, _Model) else v for k, v in sorted(self.kwargs.items())}


class V1ResourceRequirements(_Model):
    fields = {"requests", "limits", "claims"}


class V1Volume(_Model):
    fields = {"name", "persistent_volume_claim", "config_map", "secret", "empty_dir"}


class V1PersistentVolumeClaimVolumeSource(_Model):
    fields = {"claim_name", "read_only"}


class V1ConfigMapVolumeSource(_Model):
    fields = {"name", "items", "optional", "default_mode"}


class V1SecretVolumeSource(_Model):
    fields = {"secret_name", "items", "optional", "default_mode"}


class V1VolumeMount(_Model):
    fields = {"name", "mount_path", "read_only", "sub_path"}
