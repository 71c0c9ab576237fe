type BadgeProps = { count: number; label: string };

function Badge(props: BadgeProps) {
  return <span title={props.label}>{props.count}</span>;
}

export const Summary = () => {
  const unusedFlag = true;
  return <Badge count="3" label="items" />;
};
