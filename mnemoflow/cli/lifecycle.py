"""Commands on a memory's and a tenant's life: pin, share, and deleting a whole tenant."""

from __future__ import annotations

from typing import Annotated

import typer

from mnemoflow.cli.app import ArgumentError, Home, Tenant, User, app, out, scope_of, service_for
from mnemoflow.errors import NotFoundError

tenant_app = typer.Typer(no_args_is_help=True, help="Tenants: deleting one and everything it holds.")
app.add_typer(tenant_app, name="tenant")

MemoryId = Annotated[str, typer.Argument(help="The memory (an id from recall, search or history).")]


@app.command()
def pin(
    memory_id: MemoryId, home: Home = None, tenant: Tenant = None, user: User = None,
    unpin: Annotated[bool, typer.Option("--unpin", help="Let decay judge the memory again.")] = False,
) -> None:
    """Keep one of the user's memories: decay never archives it (an archived one comes back)."""
    with service_for(home) as service:
        memory = service.pin(scope_of(service, tenant, user), memory_id, pinned=not unpin)
    out.print(f"{'pinned' if memory.pinned else 'unpinned'} {memory.id}", markup=False)


@app.command()
def share(
    memory_id: MemoryId, home: Home = None, tenant: Tenant = None, user: User = None,
    unshare: Annotated[bool, typer.Option("--unshare", help="Make it the user's alone again.")] = False,
) -> None:
    """Let every user of the tenant see one of the user's memories."""
    with service_for(home) as service:
        service.share(scope_of(service, tenant, user), memory_id, shared=not unshare)
    out.print(f"{'unshared' if unshare else 'shared'} {memory_id}", markup=False)


@tenant_app.command("delete")
def tenant_delete(
    tenant_id: Annotated[str, typer.Argument(metavar="TENANT", help="The tenant to delete.")],
    home: Home = None,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
) -> None:
    """Delete a tenant: its keys are revoked and nothing of it is returned from now on; then every row,
    vector and index entry of it is removed for good (the commits recording it stay)."""
    from mnemoflow.storage.scope import check_id

    check_id("tenant_id", tenant_id)
    if not yes:
        typer.confirm(f"Delete tenant {tenant_id} and everything it holds, for good?", abort=True)
    with service_for(home) as service:
        try:
            done = service.delete_tenant(tenant_id, actor="cli")
        except NotFoundError as exc:
            raise ArgumentError(str(exc)) from None
    removed = ", ".join(f"{n} {what}" for what, n in done.purged.items() if n) or "nothing left to remove"
    out.print(f"deleted tenant {tenant_id}: {done.keys_revoked} keys revoked; purged {removed}", markup=False)
