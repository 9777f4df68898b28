"""`recall ui`: a local web view of what recall holds, one more edge over ``recall.Memory``.

Pages (recall.web.pages) read, actions (recall.web.actions) change a decision's status or forget a
row; both call only the library API. Templates, the stylesheet and nothing else ship in the
package: no script, no font and no file is fetched from anywhere (adr/0023).
"""

from recall.web.app import create_app

__all__ = ["create_app"]
