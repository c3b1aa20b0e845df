/**
 * Keyboard shortcuts of a page: single keys, never while typing in a field or with Ctrl, Alt or Meta held; `?` lists
 * the page's shortcuts in a dialog (Escape closes it).
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';

export interface Shortcut {
  key: string;
  does: string;
  run: () => void;
}

/** Whether a key press belongs to what the person is typing in. */
function typing(e: KeyboardEvent): boolean {
  const target = e.target as HTMLElement | null;
  if (!target) return false;
  return target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
}

/** Runs the page's shortcuts; answers the help dialog to show. */
export function useShortcuts(shortcuts: Shortcut[]) {
  const [help, setHelp] = useState(false);
  const current = useRef(shortcuts);
  current.current = shortcuts;
  // A layout effect: listening as soon as the page is drawn, not after the next paint, so keys pressed the moment a
  // list appears are not lost.
  useLayoutEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.altKey || e.metaKey || typing(e)) return;
      if (e.key === '?') {
        e.preventDefault();
        setHelp((shown) => !shown);
        return;
      }
      const found = current.current.find((s) => s.key === e.key);
      if (!found) return;
      e.preventDefault();
      found.run();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
  return help ? <ShortcutHelp shortcuts={shortcuts} close={() => setHelp(false)} /> : null;
}

function ShortcutHelp({ shortcuts, close }: { shortcuts: Shortcut[]; close: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  return (
    <dialog ref={dialog} class="shortcuts" aria-labelledby="shortcuts-title" onClose={close}>
      <h2 id="shortcuts-title">Keyboard shortcuts</h2>
      <table>
        <caption class="sr-only">The keys of this page</caption>
        <tbody>
          {[...shortcuts, { key: '?', does: 'Show or hide this list' }].map((s) => (
            <tr key={s.key}>
              <th scope="row">
                <kbd>{s.key}</kbd>
              </th>
              <td>{s.does}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <form method="dialog">
        <button type="submit">Close</button>
      </form>
    </dialog>
  );
}
