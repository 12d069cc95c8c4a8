"""Stub of the cncf.kubernetes provider's Secret."""


class Secret:
    """A Kubernetes Secret exposed to the pod."""

    def __init__(self, deploy_type, deploy_target, secret, key=None):
        self.deploy_type, self.deploy_target, self.secret, self.key = deploy_type, deploy_target, secret, key

    def as_dict(self):
        return {"type": self.deploy_type, "target": self.deploy_target, "secret": self.secret, "key": self.key}
