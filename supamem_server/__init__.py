"""supamem's HTTP surface: seed 000/001's chat endpoint, seed 002's REST API and seed 004's
memory controls, as a thin FastAPI app over the kit's SQL.

Every request runs as the signed-in user whose Supabase Auth token it carries (`set local role
authenticated` plus `request.jwt.claims`, as PostgREST does), so row-level security decides what
it reaches; the service role never serves a user's request. Run it (`make serve`, or
`python -m supamem_server`) or mount its routers in an existing FastAPI app:

    from supamem_server import create_app, routers
    app = create_app()                        # a whole app, settings from the environment
    for router in routers: my_app.include_router(router)   # or the routes alone: set
    my_app.state.supamem = Services(...)      # the same state create_app sets (see app.py)
"""

from .app import Services, create_app, routers

__all__ = ["Services", "create_app", "routers"]
